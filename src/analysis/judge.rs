//! The judgement: from a window's samples, gendata's and the probe's
//! summaries, the verify phase's findings and bench.yaml's tolerances to a
//! record's regime, flags and figures. A pure function, so every rule is
//! tested on crafted series.

use std::collections::BTreeMap;

use crate::analysis::etl::SinkFigures;
use crate::config::Tolerances;
use crate::gendata::GendataSummary;
use crate::probe::{ProbeSummary, PROBE_BEHIND_LIMIT_MS};
use crate::results::{
    flag, Better, Metric, Regime, ResourceSummary, Resources, RunConfig, Sanity, SanityVerdict,
    Series, Verification, VerificationVerdict,
};

use super::flow_checks::{flow_disagreements, FlowFigures};
use super::sanity::{judge_sanity, SanityInputs};
use super::steady;
use super::window::{self, OffsetRead, Sample};
use super::{
    added_over_floor, classify, rows_per_s_per_core, rows_per_s_per_gb, us_cpu_per_record,
};
use crate::gendata::schedule::Schedule;
use crate::workloads::{Checked, TopicOutput};

/// What the verify phase found, or why the output could not be verified.
#[derive(Debug, Clone)]
pub enum Verified {
    Checked(Checked),
    Skipped(String),
}

/// How the settle phase after the window went.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settle {
    /// From the window's end until the product had committed the whole
    /// input, or until the bound ran out.
    pub seconds: f64,
    /// Whether the product committed the whole input in that time.
    pub reached_end: bool,
}

/// Everything a run's figures are judged from.
#[derive(Debug, Clone, Copy)]
pub struct JudgeInputs<'a> {
    /// Samples from the first after start-up to the window's end.
    pub samples: &'a [Sample],
    /// Index of the sample taken at the window's start.
    pub window_start: usize,
    /// The offsets read between samples.
    pub offset_polls: &'a [OffsetRead],
    pub window_start_us: i64,
    pub ticks_per_s: f64,
    pub config: &'a RunConfig,
    /// What the workload owes, for the sanity checks.
    pub workload: &'a dyn TopicOutput,
    /// gendata's schedule; `None` when unpaced.
    pub schedule: Option<Schedule>,
    pub gendata: &'a GendataSummary,
    pub probe: &'a ProbeSummary,
    pub verified: &'a Verified,
    pub settle: Option<Settle>,
    /// A crash was injected into the run.
    pub chaos: bool,
    pub tolerances: &'a Tolerances,
}

/// A run's regime, flags and figures.
#[derive(Debug, Clone, Default)]
pub struct Judgement {
    /// Why the run failed, when it did.
    pub failure: Option<String>,
    pub regime: Option<Regime>,
    /// In the order they were set.
    pub flags: Vec<&'static str>,
    pub metrics: BTreeMap<String, Metric>,
    pub not_applicable: BTreeMap<String, String>,
    pub sanity: Option<Sanity>,
    pub verification: Option<Verification>,
    pub resources: Option<Resources>,
    pub series: Option<Series>,
}

impl Judgement {
    fn put(&mut self, name: &str, value: f64, unit: &str, better: Better) {
        self.metrics
            .insert(name.into(), Metric::new(value, unit, better));
    }

    /// Puts `value`, or notes why the figure does not apply.
    fn maybe(&mut self, name: &str, value: Option<f64>, unit: &str, better: Better, why: &str) {
        match value {
            Some(value) => self.put(name, value, unit, better),
            None => self.not_applies(name, why),
        }
    }

    fn not_applies(&mut self, name: &str, why: &str) {
        self.not_applicable.insert(name.into(), why.into());
    }
}

const RATE: &str = "records/s";

/// The window's samples (from `window_start` on) and the input's flow over
/// them, or why the window cannot be judged.
fn window_flow<'s>(
    samples: &'s [Sample],
    window_start: usize,
    offset_polls: &[OffsetRead],
    window_s: f64,
) -> Result<(&'s [Sample], window::Flow), String> {
    let window = &samples[window_start.min(samples.len())..];
    let reads = window::offset_reads(window, offset_polls);
    match window::flow(&reads, window_s) {
        Some(flow) => Ok((window, flow)),
        None => Err(format!(
            "the window held {} sample(s); at least 2 are needed to judge it",
            window.len()
        )),
    }
}

/// Judges one run.
pub fn judge(m: &JudgeInputs<'_>) -> Judgement {
    let mut j = Judgement::default();
    let window_s = m.config.window_s as f64;
    let (window, flow) = match window_flow(m.samples, m.window_start, m.offset_polls, window_s) {
        Ok(measured) => measured,
        Err(why) => {
            j.failure = Some(why);
            return j;
        }
    };
    let regime = classify(flow.drift, m.tolerances.lag_drift);
    let offered_per_s = m.gendata.window_records as f64 / window_s;
    let output_per_s = m.probe.output.count as f64 / window_s;
    let consumed = flow.consumed.round() as u64;
    let expected_selectivity = (m.config.input_partitions == 1)
        .then(|| {
            m.workload.expected_selectivity(
                m.config.seed,
                m.schedule,
                flow.committed_first,
                flow.committed_first + consumed,
            )
        })
        .flatten();
    // A run with a crash injected has its flow disturbed by design.
    let disagreements = if m.chaos {
        Vec::new()
    } else {
        flow_disagreements(&FlowFigures {
            flow: &flow,
            window_s,
            regime,
            offered_per_s,
            output_per_s: Some(output_per_s),
            expected_selectivity,
            offered_vs_input: m.tolerances.offered_vs_input,
            output_vs_consumed: m.tolerances.output_vs_consumed,
            lag_drift: m.tolerances.lag_drift,
        })
    };
    let resources = Resources {
        product: window::summarize(window, m.ticks_per_s, |r| Some(&r.product)),
        broker: window::summarize(window, m.ticks_per_s, |r| r.broker.as_ref()),
        gendata: window::summarize(window, m.ticks_per_s, |r| Some(&r.gendata)),
        probe: window::summarize(window, m.ticks_per_s, |r| Some(&r.probe)),
        sink: None,
        host: window::host_load(window),
    };
    let slow_samples = window::slow_samples(window);

    // flags on the run as a whole
    if m.probe.unreadable > 0 {
        j.flags.push(flag::UNREADABLE_OUTPUT);
    }
    // Unpaced (rate 0), gendata has no schedule to fall behind: its
    // lateness is send-to-acknowledgement time under a full queue.
    let paced = m.config.rate > 0;
    let generator_behind = paced && m.gendata.behind_p99_ms > m.tolerances.generator_behind_ms;
    if generator_behind {
        j.flags.push(flag::GENERATOR_BEHIND);
    }
    let lag = &m.probe.lag;
    let probe_behind = lag.trailing_p99_ms > PROBE_BEHIND_LIMIT_MS;
    if probe_behind {
        j.flags.push(flag::PROBE_BEHIND);
    }
    if resources
        .host
        .as_ref()
        .is_some_and(|h| h.busy_avg_pct > m.tolerances.host_busy_pct)
    {
        j.flags.push(flag::HOST_SATURATED);
    }
    if flow.coarse_commits {
        j.flags.push(flag::COARSE_COMMITS);
    }
    if slow_samples > 0 {
        j.flags.push(flag::SLOW_SAMPLES);
    }
    if m.gendata.delivery_errors > 0 {
        j.failure = Some(format!(
            "gendata: {} records were not delivered to the input topic",
            m.gendata.delivery_errors
        ));
    }
    // A keep-up window whose CPU per record moved between its first and
    // last thirds was still warming up (or cooling down).
    if regime == Regime::KeepUp {
        if let Some(thirds) = steady::cpu_thirds(window, m.ticks_per_s) {
            let us = |s: f64| s * 1e6;
            j.put(
                "cpu_per_record_first_third_us",
                us(thirds.first),
                "us",
                Better::Lower,
            );
            j.put(
                "cpu_per_record_last_third_us",
                us(thirds.last),
                "us",
                Better::Lower,
            );
            if thirds.differ(m.tolerances.window_thirds_cpu) {
                j.flags.push(flag::NOT_STEADY);
            }
        }
    }

    // throughput and regime
    j.put("offered_per_s", offered_per_s, RATE, Better::Higher);
    j.put("consumed_per_s", flow.consumed_per_s, RATE, Better::Higher);
    j.put("input_per_s", flow.input_per_s, RATE, Better::Higher);
    j.put("output_per_s", output_per_s, RATE, Better::Higher);
    j.put(
        "unreadable_output_records",
        m.probe.unreadable as f64,
        "records",
        Better::Lower,
    );
    j.put("lag_drift", flow.drift, "ratio", Better::Lower);
    j.put(
        "backlog_start",
        flow.backlog_first as f64,
        "records",
        Better::Lower,
    );
    j.put(
        "backlog_end",
        flow.backlog_last as f64,
        "records",
        Better::Lower,
    );
    j.put(
        "commit_moves",
        flow.commit_moves as f64,
        "intervals",
        Better::Higher,
    );
    j.put(
        "slow_samples",
        slow_samples as f64,
        "samples",
        Better::Lower,
    );
    j.put(
        "gendata_behind_p99_ms",
        m.gendata.behind_p99_ms,
        "ms",
        Better::Lower,
    );
    j.put(
        "gendata_behind_max_ms",
        m.gendata.behind_max_ms,
        "ms",
        Better::Lower,
    );
    j.put("probe_lag_p99_ms", lag.trailing_p99_ms, "ms", Better::Lower);
    j.put("probe_lag_max_ms", lag.trailing_max_ms, "ms", Better::Lower);
    j.put(
        "probe_lag_samples",
        lag.samples as f64,
        "samples",
        Better::Higher,
    );
    match m.settle {
        Some(settle) if settle.reached_end => j.put("settle_s", settle.seconds, "s", Better::Lower),
        Some(settle) => j.not_applies(
            "settle_s",
            &format!(
                "the product had not finished its input when the settle phase ended after {:.0} s",
                settle.seconds
            ),
        ),
        None => j.not_applies("settle_s", "the product was down at the window's end"),
    }
    let (first, last) = (&window[0], &window[window.len() - 1]);
    if let (Some(start), Some(end)) = (first.extra_high, last.extra_high) {
        j.put(
            "extra_records_per_record",
            (end - start) as f64 / flow.consumed.max(1.0),
            "records/record",
            Better::Lower,
        );
    }

    // efficiency
    if let Some(p) = &resources.product {
        put_efficiency(&mut j, p, flow.consumed_per_s);
    }

    // latency
    let floor_seen = m.probe.floor.count > 0;
    if floor_seen {
        j.put("floor_p50_ms", m.probe.floor.p50_ms, "ms", Better::Lower);
        j.put("floor_p99_ms", m.probe.floor.p99_ms, "ms", Better::Lower);
    } else {
        for name in [
            "floor_p50_ms",
            "floor_p99_ms",
            "added_p50_ms",
            "added_p99_ms",
        ] {
            j.not_applies(name, "no floor record arrived in the window");
        }
    }
    let out = &m.probe.output;
    // Latency is quoted only where it means something: the product kept up,
    // gendata kept its schedule, and records were timed at all.
    let withheld = if regime != Regime::KeepUp {
        Some(format!("the run was {}, not keep-up", regime.as_str()))
    } else if generator_behind {
        Some(format!(
            "gendata fell behind its schedule (p99 {:.1} ms at delivery, limit {} ms)",
            m.gendata.behind_p99_ms, m.tolerances.generator_behind_ms
        ))
    } else if probe_behind {
        Some(format!(
            "the probe trailed the output by {:.1} ms worth at p99 (limit {PROBE_BEHIND_LIMIT_MS} ms)",
            lag.trailing_p99_ms
        ))
    } else if out.count == 0 {
        Some("no output record arrived in the window".to_string())
    } else {
        None
    };
    match withheld {
        Some(why) => {
            for name in ["latency", "added_p50_ms", "added_p99_ms"] {
                j.not_applies(name, &why);
            }
        }
        None => {
            j.put("latency_p50_ms", out.p50_ms, "ms", Better::Lower);
            j.put("latency_p90_ms", out.p90_ms, "ms", Better::Lower);
            j.put("latency_p99_ms", out.p99_ms, "ms", Better::Lower);
            j.put("latency_count", out.count as f64, "records", Better::Higher);
            // A tail that gendata itself may have made is no product's tail.
            if paced && m.gendata.behind_max_ms > m.tolerances.generator_behind_ms {
                let why = format!(
                    "gendata's max lateness {:.1} ms exceeds the limit {} ms",
                    m.gendata.behind_max_ms, m.tolerances.generator_behind_ms
                );
                j.not_applies("latency_p999_ms", &why);
                j.not_applies("latency_max_ms", &why);
            } else {
                j.put("latency_p999_ms", out.p999_ms, "ms", Better::Lower);
                j.put("latency_max_ms", out.max_ms, "ms", Better::Lower);
            }
            let added = [
                ("added_p50_ms", out.p50_ms, m.probe.floor.p50_ms),
                ("added_p99_ms", out.p99_ms, m.probe.floor.p99_ms),
            ];
            for (name, product, floor) in added.into_iter().filter(|_| floor_seen) {
                j.maybe(
                    name,
                    added_over_floor(product, floor),
                    "ms",
                    Better::Lower,
                    "the product's percentile is below the floor's",
                );
            }
        }
    }

    // Sanity and verification: did the product do the workload's work, all
    // of it, once?
    if m.chaos {
        j.flags.push(flag::CHAOS);
    }
    let (content, figures) = match m.verified {
        Verified::Checked(checked) => (checked.content, checked.figures.clone()),
        Verified::Skipped(_) => ((0, 0), BTreeMap::new()),
    };
    let sanity = judge_sanity(SanityInputs {
        spec: m.workload.sanity(),
        output: out.count,
        consumed,
        expected_selectivity,
        tolerance: m.tolerances.selectivity,
        content,
        figures,
    });
    if sanity.verdict != SanityVerdict::Ok {
        j.flags.push(flag::SANITY_WARNING);
    }
    j.sanity = Some(sanity);
    put_verification(&mut j, m.verified);

    withhold_if_inconsistent(&mut j, &disagreements);
    j.regime = Some(regime);
    j.series = Some(window::series(m.samples, m.window_start_us, m.ticks_per_s));
    // latency over time: a stall is a flag the page shows; it withholds nothing
    if let (Some(latency), Some(series)) = (&m.probe.intervals, &j.series) {
        let stalls = super::latency_over_time::judge_stalls(latency, series).count();
        j.put("stalls", stalls as f64, "intervals", Better::Lower);
        if stalls > 0 {
            j.flags.push(flag::STALLS);
        }
    }
    j.resources = Some(resources);
    j
}

/// The figures a run whose flow figures disagree does not quote: its
/// capacity (consumed/s), what is per record consumed, and its latency.
const FLOW_DEPENDENT: [&str; 4] = [
    "consumed_per_s",
    "rows_per_s_per_core",
    "us_cpu_per_record",
    "rows_per_s_per_gb",
];

/// Flags `inconsistent-flow` and takes out the figures that lean on the
/// flow, each with the disagreements as its reason.
fn withhold_if_inconsistent(j: &mut Judgement, disagreements: &[String]) {
    if disagreements.is_empty() {
        return;
    }
    let why = format!("the flow figures disagree: {}", disagreements.join("; "));
    j.flags.push(flag::INCONSISTENT_FLOW);
    let latency: Vec<String> = j
        .metrics
        .keys()
        .filter(|name| name.starts_with("latency_") || name.starts_with("added_"))
        .cloned()
        .collect();
    let quoted_latency = !latency.is_empty();
    for name in FLOW_DEPENDENT.iter().map(|n| n.to_string()).chain(latency) {
        j.metrics.remove(&name);
        j.not_applies(&name, &why);
    }
    // Latency withheld here, not for a reason already given (a saturated
    // run's), and not on a run that times none (an ETL run).
    if quoted_latency {
        j.not_applies("latency", &why);
    }
    j.not_applies("flow", &disagreements.join("; "));
}

/// CPU, memory and the efficiency figures of the product's tree, with
/// `consumed_per_s` as the rate the efficiency is of.
fn put_efficiency(j: &mut Judgement, p: &ResourceSummary, consumed_per_s: f64) {
    let cpu_unit = "% of one core";
    j.put("cpu_avg_pct", p.cpu_avg_pct, cpu_unit, Better::Lower);
    j.put("cpu_p95_pct", p.cpu_p95_pct, cpu_unit, Better::Lower);
    j.put("mem_avg_mb", p.mem_avg_mb, "MB", Better::Lower);
    j.put("mem_max_mb", p.mem_max_mb, "MB", Better::Lower);
    if let Some(rss) = p.rss_avg_mb {
        j.put("rss_avg_mb", rss, "MB", Better::Lower);
    }
    j.maybe(
        "uss_avg_mb",
        p.uss_avg_mb,
        "MB",
        Better::Lower,
        "the product's smaps_rollup could not be read at every sample",
    );
    j.put("samples", p.samples as f64, "samples", Better::Higher);
    j.maybe(
        "rows_per_s_per_core",
        rows_per_s_per_core(consumed_per_s, p.cpu_avg_pct),
        "records/s per core",
        Better::Higher,
        "the product used no measurable CPU",
    );
    j.maybe(
        "us_cpu_per_record",
        us_cpu_per_record(consumed_per_s, p.cpu_avg_pct),
        "us",
        Better::Lower,
        "the product consumed no records",
    );
    j.maybe(
        "rows_per_s_per_gb",
        rows_per_s_per_gb(consumed_per_s, p.mem_avg_mb),
        "records/s per GB",
        Better::Higher,
        "the product's memory could not be read",
    );
}

/// The verification, and its verdict as a flag.
fn put_verification(j: &mut Judgement, verified: &Verified) {
    match verified {
        Verified::Checked(Checked { verification, .. }) => {
            match verification.verdict {
                VerificationVerdict::Passed => {}
                VerificationVerdict::Failed => j.flags.push(flag::VERIFICATION_FAILED),
                VerificationVerdict::Incomplete => j.flags.push(flag::VERIFICATION_INCOMPLETE),
            }
            j.verification = Some(verification.clone());
        }
        Verified::Skipped(why) => j.not_applies("verification", why),
    }
}

/// Everything a drain run's figures are judged from.
#[derive(Debug, Clone, Copy)]
pub struct DrainInputs<'a> {
    /// Records pre-filled: the backlog the product drains.
    pub records: u64,
    /// When the product reported itself ready, epoch microseconds.
    pub ready_us: i64,
    /// (read time, committed offset) of every poll of the product's
    /// committed input offset, from its readiness on.
    pub progress: &'a [(i64, i64)],
    /// Samples from the product's readiness to the drain's end.
    pub samples: &'a [Sample],
    pub ticks_per_s: f64,
    pub config: &'a RunConfig,
    /// What the workload owes, for the sanity checks.
    pub workload: &'a dyn TopicOutput,
    /// gendata's account of the pre-fill.
    pub prefill: &'a GendataSummary,
    pub verified: &'a Verified,
    /// How long the product was given to drain, seconds.
    pub bound_s: f64,
    pub tolerances: &'a Tolerances,
}

/// The span over which a drain is timed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DrainSpan {
    /// The first poll that saw the committed offset above zero.
    pub first_us: i64,
    /// The committed offset at that poll.
    pub first_committed: u64,
    /// The first poll that saw the whole backlog committed; None when the
    /// bound ran out first.
    pub end_us: Option<i64>,
    /// The highest committed offset seen.
    pub committed_max: u64,
    /// Polls after the first that saw the committed offset move, up to
    /// the end: the commits the drain is timed over.
    pub commits: usize,
}

/// The drain's span from the polls of the committed offset; None when the
/// product committed nothing.
pub fn drain_span(progress: &[(i64, i64)], records: u64) -> Option<DrainSpan> {
    let first_at = progress.iter().position(|(_, c)| *c > 0)?;
    let (first_us, first) = progress[first_at];
    let end_us = progress
        .iter()
        .find(|(_, c)| *c >= 0 && *c as u64 >= records)
        .map(|&(at, _)| at);
    let committed_max = progress.iter().map(|&(_, c)| c.max(0) as u64).max()?;
    let mut commits = 0;
    let mut last = first;
    for &(at, committed) in &progress[first_at + 1..] {
        if end_us.is_some_and(|end| at > end) {
            break;
        }
        if committed > last {
            commits += 1;
            last = committed;
        }
    }
    Some(DrainSpan {
        first_us,
        first_committed: first as u64,
        end_us,
        committed_max,
        commits,
    })
}

/// Commits a drain must span after its first for its time to mean a rate:
/// with fewer, the time is mostly the commit cadence's.
pub const MIN_DRAIN_COMMITS: usize = 3;
/// Commits the suggested drain size spans.
const SUGGESTED_DRAIN_COMMITS: f64 = 10.0;

/// A drain size, in records, that spans [`SUGGESTED_DRAIN_COMMITS`] commits
/// at `per_s`, one commit every `cadence_s`; rounded up to two significant
/// digits.
fn drain_size_for(per_s: f64, cadence_s: f64) -> u64 {
    let records = (per_s * cadence_s * SUGGESTED_DRAIN_COMMITS).max(1.0);
    let unit = 10f64.powi(records.log10().floor() as i32 - 1).max(1.0);
    ((records / unit).ceil() * unit) as u64
}

/// Drain capacity, records/s: the records committed from the first commit
/// seen to the one that completed the backlog, over the seconds between the
/// two. Records the first commit covers are left out: their time includes
/// the product's start-up and its group join, which are no read capacity.
/// A drain over fewer than [`MIN_DRAIN_COMMITS`] commits is too short for
/// the product's commit cadence: the reason says which size would measure.
pub fn drain_capacity(
    span: &DrainSpan,
    records: u64,
    ready_us: i64,
    commit_interval_ms: u64,
) -> Result<f64, String> {
    let Some(end_us) = span.end_us else {
        return Err(format!(
            "the product had committed {} of {records} records when the drain bound ran out",
            span.committed_max
        ));
    };
    let seconds = (end_us - span.first_us) as f64 / 1e6;
    let interval_s = commit_interval_ms as f64 / 1000.0;
    if seconds <= 0.0 {
        // Everything was read between readiness and the first commit. The
        // time to that commit includes start-up and the group join, so the
        // rate it gives is a lower bound only; ten times the backlog is the
        // least that can help.
        let at_least = records as f64 / ((span.first_us - ready_us) as f64 / 1e6).max(1e-3);
        let size = drain_size_for(at_least, interval_s).max(records.saturating_mul(10));
        return Err(format!(
            "the first commit seen covered the whole backlog of {records} records: the drain is \
             too short for a commit every {commit_interval_ms} ms; use --drain {size} or more"
        ));
    }
    let per_s = records.saturating_sub(span.first_committed) as f64 / seconds;
    if span.commits < MIN_DRAIN_COMMITS {
        let cadence_s = (seconds / span.commits.max(1) as f64).max(interval_s);
        return Err(format!(
            "the drain spanned {} commit(s) after the first in {seconds:.2} s, too few to time \
             it (at least {MIN_DRAIN_COMMITS}); use --drain {} or more",
            span.commits,
            drain_size_for(per_s, cadence_s)
        ));
    }
    Ok(per_s)
}

/// Judges one drain run. A drain has no schedule and no window: the regime
/// is draining by design, no latency is quoted and gendata (which finished
/// before the product started) cannot have fallen behind.
pub fn judge_drain(m: &DrainInputs<'_>) -> Judgement {
    let mut j = Judgement::default();
    if m.prefill.delivery_errors > 0 || m.prefill.records_acked < m.records {
        j.failure = Some(format!(
            "the pre-fill delivered {} of {} records ({} refused)",
            m.prefill.records_acked, m.records, m.prefill.delivery_errors
        ));
    }
    let why_latency = "a drain run has no schedule: every record was written before the \
                       product started, so its age measures the backlog, not the product";
    for name in ["latency", "added_p50_ms", "added_p99_ms"] {
        j.not_applies(name, why_latency);
    }
    j.not_applies(
        "offered_per_s",
        "a drain run offers its records before the product starts",
    );
    j.not_applies(
        "lag_drift",
        "a drain run's backlog only shrinks: its regime is draining by design",
    );

    // the drain's span and its figures
    let span = drain_span(m.progress, m.records);
    let capacity = match &span {
        Some(span) => drain_capacity(span, m.records, m.ready_us, m.config.commit_interval_ms),
        None => Err(format!(
            "the product committed nothing within the drain bound of {:.0} s",
            m.bound_s
        )),
    };
    match &capacity {
        Ok(per_s) => j.put("drain_capacity_per_s", *per_s, RATE, Better::Higher),
        Err(why) => j.not_applies("drain_capacity_per_s", why),
    }
    if let Some(span) = &span {
        j.put(
            "drain_first_commit_s",
            (span.first_us - m.ready_us) as f64 / 1e6,
            "s",
            Better::Lower,
        );
        match (span.end_us, &capacity) {
            (Some(end_us), Ok(_)) => j.put(
                "drain_s",
                (end_us - span.first_us) as f64 / 1e6,
                "s",
                Better::Lower,
            ),
            (_, Err(why)) => j.not_applies("drain_s", why),
            (None, Ok(_)) => {}
        }
    }
    // The samples of the span: from the first commit on, up to the first
    // sample that saw the whole backlog committed.
    let in_span: Vec<Sample> = match &span {
        Some(span) => {
            let mut rows = Vec::new();
            for s in m
                .samples
                .iter()
                .filter(|s| s.committed_at_us >= span.first_us)
            {
                rows.push(s.clone());
                if s.committed >= 0 && s.committed as u64 >= m.records {
                    break;
                }
            }
            rows
        }
        None => Vec::new(),
    };
    let span_s = match (in_span.first(), in_span.last()) {
        (Some(a), Some(b)) => (b.committed_at_us - a.committed_at_us) as f64 / 1e6,
        _ => 0.0,
    };
    let flow = window::flow(&window::offset_reads(&in_span, &[]), span_s);
    let short = "the drain spanned fewer than two samples; use a larger --drain";
    match &flow {
        Some(flow) => j.put("consumed_per_s", flow.consumed_per_s, RATE, Better::Higher),
        None => j.not_applies("consumed_per_s", short),
    }
    let resources = Resources {
        product: window::summarize(&in_span, m.ticks_per_s, |r| Some(&r.product)),
        broker: window::summarize(&in_span, m.ticks_per_s, |r| r.broker.as_ref()),
        gendata: None,
        probe: None,
        sink: None,
        host: window::host_load(&in_span),
    };
    if resources
        .host
        .as_ref()
        .is_some_and(|h| h.busy_avg_pct > m.tolerances.host_busy_pct)
    {
        j.flags.push(flag::HOST_SATURATED);
    }
    let slow_samples = window::slow_samples(&in_span);
    if slow_samples > 0 {
        j.flags.push(flag::SLOW_SAMPLES);
    }
    j.put(
        "slow_samples",
        slow_samples as f64,
        "samples",
        Better::Lower,
    );
    match (&resources.product, &capacity) {
        (Some(p), Ok(per_s)) => put_efficiency(&mut j, p, *per_s),
        (Some(p), Err(_)) => put_efficiency(&mut j, p, flow.map_or(0.0, |f| f.consumed_per_s)),
        (None, _) => j.not_applies("cpu_avg_pct", short),
    }

    // sanity and verification over the whole input
    if let Verified::Checked(checked) = m.verified {
        let consumed = checked.verification.committed_offset.min(m.records);
        // The pre-fill is unpaced: no schedule.
        let sanity = judge_sanity(SanityInputs {
            spec: m.workload.sanity(),
            output: checked.verification.output_records,
            consumed,
            expected_selectivity: (m.config.input_partitions == 1)
                .then(|| {
                    m.workload
                        .expected_selectivity(m.config.seed, None, 0, consumed)
                })
                .flatten(),
            tolerance: m.tolerances.selectivity,
            content: checked.content,
            figures: checked.figures.clone(),
        });
        if sanity.verdict != SanityVerdict::Ok {
            j.flags.push(flag::SANITY_WARNING);
        }
        j.sanity = Some(sanity);
    }
    put_verification(&mut j, m.verified);

    j.regime = Some(Regime::Draining);
    j.series = Some(window::series(m.samples, m.ready_us, m.ticks_per_s));
    j.resources = Some(resources);
    j
}

/// Everything an ETL run's figures are judged from: a run whose output is
/// a ClickHouse table, not a topic, so it has no probe.
#[derive(Debug, Clone, Copy)]
pub struct EtlInputs<'a> {
    /// Samples from the first after start-up to the window's end.
    pub samples: &'a [Sample],
    pub window_start: usize,
    pub offset_polls: &'a [OffsetRead],
    pub window_start_us: i64,
    pub ticks_per_s: f64,
    pub config: &'a RunConfig,
    pub gendata: &'a GendataSummary,
    /// (count time, rows in the table) at the window's start and end.
    pub table_rows: [(i64, u64); 2],
    /// Events per message: rows/s is compared with messages/s through it.
    pub events: u32,
    /// The inserts acknowledged in the window; none when there were none.
    pub sink: Option<&'a SinkFigures>,
    pub verified: &'a Verified,
    pub settle: Option<Settle>,
    pub tolerances: &'a Tolerances,
}

/// An ETL run's regime (from the input's lag drift, as any run's), rows
/// landed per second, the sink's figures, resources and verification.
pub fn judge_etl(m: &EtlInputs<'_>) -> Judgement {
    let mut j = Judgement::default();
    let window_s = m.config.window_s as f64;
    let (window, flow) = match window_flow(m.samples, m.window_start, m.offset_polls, window_s) {
        Ok(measured) => measured,
        Err(why) => {
            j.failure = Some(why);
            return j;
        }
    };
    let regime = classify(flow.drift, m.tolerances.lag_drift);
    let disagreements = flow_disagreements(&FlowFigures {
        flow: &flow,
        window_s,
        regime,
        offered_per_s: m.gendata.window_records as f64 / window_s,
        output_per_s: None,
        expected_selectivity: None,
        offered_vs_input: m.tolerances.offered_vs_input,
        output_vs_consumed: m.tolerances.output_vs_consumed,
        lag_drift: m.tolerances.lag_drift,
    });
    let resources = Resources {
        product: window::summarize(window, m.ticks_per_s, |r| Some(&r.product)),
        broker: window::summarize(window, m.ticks_per_s, |r| r.broker.as_ref()),
        gendata: window::summarize(window, m.ticks_per_s, |r| Some(&r.gendata)),
        probe: None,
        sink: window::summarize(window, m.ticks_per_s, |r| r.sink.as_ref()),
        host: window::host_load(window),
    };
    if m.config.rate > 0 && m.gendata.behind_p99_ms > m.tolerances.generator_behind_ms {
        j.flags.push(flag::GENERATOR_BEHIND);
    }
    if resources
        .host
        .as_ref()
        .is_some_and(|h| h.busy_avg_pct > m.tolerances.host_busy_pct)
    {
        j.flags.push(flag::HOST_SATURATED);
    }
    if flow.coarse_commits {
        j.flags.push(flag::COARSE_COMMITS);
    }
    if m.gendata.delivery_errors > 0 {
        j.failure = Some(format!(
            "gendata: {} records were not delivered to the input topic",
            m.gendata.delivery_errors
        ));
    }
    j.put(
        "offered_per_s",
        m.gendata.window_records as f64 / window_s,
        RATE,
        Better::Higher,
    );
    j.put("consumed_per_s", flow.consumed_per_s, RATE, Better::Higher);
    j.put("lag_drift", flow.drift, "ratio", Better::Lower);
    let [(start_us, start_rows), (end_us, end_rows)] = m.table_rows;
    let counted_s = (end_us - start_us) as f64 / 1e6;
    if counted_s > 0.0 {
        j.put(
            "rows_per_s",
            end_rows.saturating_sub(start_rows) as f64 / counted_s,
            "rows/s",
            Better::Higher,
        );
    }
    j.put(
        "events_per_message",
        f64::from(m.events),
        "events",
        Better::Higher,
    );
    match m.sink {
        Some(sink) => {
            j.put("sink_flush_p50_ms", sink.flush_p50_ms, "ms", Better::Lower);
            j.put("sink_flush_p99_ms", sink.flush_p99_ms, "ms", Better::Lower);
            j.put("row_e2e_p50_ms", sink.row_e2e_p50_ms, "ms", Better::Lower);
            j.put("row_e2e_p99_ms", sink.row_e2e_p99_ms, "ms", Better::Lower);
            j.put(
                "backpressure_pauses",
                sink.pauses as f64,
                "pauses",
                Better::Lower,
            );
            j.put(
                "sink_inserts",
                sink.inserts as f64,
                "inserts",
                Better::Higher,
            );
        }
        None => {
            let why = "no insert was acknowledged in the window";
            for name in [
                "sink_flush_p50_ms",
                "sink_flush_p99_ms",
                "row_e2e_p50_ms",
                "row_e2e_p99_ms",
                "backpressure_pauses",
            ] {
                j.not_applies(name, why);
            }
            j.failure.get_or_insert_with(|| why.to_string());
        }
    }
    match m.settle {
        Some(settle) if settle.reached_end => j.put("settle_s", settle.seconds, "s", Better::Lower),
        Some(settle) => j.not_applies(
            "settle_s",
            &format!(
                "the product had not finished its input when the settle phase ended after {:.0} s",
                settle.seconds
            ),
        ),
        None => j.not_applies("settle_s", "the product was down at the window's end"),
    }
    match &resources.product {
        Some(p) => put_efficiency(&mut j, p, flow.consumed_per_s),
        None => j.not_applies("cpu_avg_pct", "the product's tree could not be sampled"),
    }
    if let Some(sink) = &resources.sink {
        j.put(
            "sink_cpu_avg_pct",
            sink.cpu_avg_pct,
            "% of one core",
            Better::Lower,
        );
        j.put("sink_mem_avg_mb", sink.mem_avg_mb, "MB", Better::Lower);
    }
    put_verification(&mut j, m.verified);
    withhold_if_inconsistent(&mut j, &disagreements);
    j.regime = Some(regime);
    j.series = Some(window::series(m.samples, m.window_start_us, m.ticks_per_s));
    j.resources = Some(resources);
    j
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::window::tests::row;
    use crate::probe::{LatencySummary, ProbeLag};

    fn tolerances() -> Tolerances {
        Tolerances {
            lag_drift: 0.02,
            selectivity: 0.25,
            generator_behind_ms: 100.0,
            host_busy_pct: 90.0,
            offered_vs_input: 0.02,
            output_vs_consumed: 0.25,
            steady_rate: 0.05,
            steady_cpu: 0.15,
            window_thirds_cpu: 0.25,
            tie_band: 0.01,
        }
    }

    /// What a verifier found: the stateless workload's figures.
    fn checked(
        verification: Verification,
        breach_rate: Option<f64>,
        content: (u64, u64),
    ) -> Verified {
        Verified::Checked(Checked {
            verification,
            content,
            figures: breach_rate
                .map(|rate| BTreeMap::from([("breach_rate".to_string(), rate)]))
                .unwrap_or_default(),
        })
    }

    fn stateless() -> &'static dyn TopicOutput {
        match crate::workloads::find("stateless").unwrap().output() {
            crate::workloads::Output::Topic(topic) => topic,
            crate::workloads::Output::Table => unreachable!("stateless writes a topic"),
        }
    }

    fn config(window_s: u64) -> RunConfig {
        RunConfig {
            rate: 1000,
            warmup_s: 2,
            warmup_cap_s: None,
            window_s,
            seed: 42,
            commit_interval_ms: 10,
            commit_intervals: None,
            client: crate::config::ClientProfile::default(),
            settings: Vec::new(),
            profile: crate::config::Profile::Uniform,
            product_settings: Default::default(),
            parallelism: 1,
            sample_interval_ms: 1000,
            input_partitions: 1,
            drain_records: None,
            etl: None,
        }
    }

    fn latency(count: u64, p50_ms: f64) -> LatencySummary {
        LatencySummary {
            count,
            p50_ms,
            p90_ms: p50_ms * 1.5,
            p99_ms: p50_ms * 2.0,
            p999_ms: p50_ms * 3.0,
            max_ms: p50_ms * 4.0,
            histogram: String::new(),
        }
    }

    fn gendata(window_records: u64, behind_p99_ms: f64, behind_max_ms: f64) -> GendataSummary {
        GendataSummary {
            records_sent: window_records,
            records_acked: window_records,
            delivery_errors: 0,
            window_records,
            window_first_seq: 0,
            achieved_rate: 1000.0,
            behind_p99_ms,
            behind_max_ms,
            behind_count: window_records,
        }
    }

    fn probe(output: u64, floor: u64) -> ProbeSummary {
        ProbeSummary {
            output: latency(output, 20.0),
            floor: latency(floor, 5.0),
            unreadable: 0,
            lag: lag(0.0),
            intervals: None,
        }
    }

    fn lag(trailing_p99_ms: f64) -> ProbeLag {
        ProbeLag {
            samples: 100,
            trailing_records_max: (trailing_p99_ms * 2.0) as u64,
            trailing_p99_ms,
            trailing_max_ms: trailing_p99_ms * 2.0,
            failed_queries: 0,
            query_p99_ms: 3.0,
            query_max_ms: 5.0,
        }
    }

    /// A crafted run: 1000/s offered, `committed_at(t)` committed at second t
    /// of a `seconds` window, two warm-up samples before it.
    struct Crafted {
        samples: Vec<Sample>,
        config: RunConfig,
        gendata: GendataSummary,
        probe: ProbeSummary,
        verified: Verified,
    }

    impl Crafted {
        fn new(seconds: usize, committed_at: impl Fn(f64) -> f64) -> Crafted {
            let samples = (0..seconds + 3)
                .map(|i| {
                    let t = i as f64;
                    // 50 % of one core at 100 ticks/s
                    row(
                        t,
                        committed_at(t) as i64,
                        (1000.0 * t) as i64,
                        50 * i as u64,
                        10,
                    )
                })
                .collect();
            let records = 1000 * seconds as u64;
            Crafted {
                samples,
                config: config(seconds as u64),
                gendata: gendata(records, 2.0, 5.0),
                probe: probe(records * 29 / 100, 1000),
                verified: checked(
                    verification(VerificationVerdict::Passed),
                    Some(0.2),
                    (records * 29 / 100, 0),
                ),
            }
        }

        fn judge(&self) -> Judgement {
            judge(&JudgeInputs {
                samples: &self.samples,
                window_start: 2,
                offset_polls: &[],
                window_start_us: 2_000_000,
                ticks_per_s: 100.0,
                config: &self.config,
                workload: stateless(),
                schedule: None,
                gendata: &self.gendata,
                probe: &self.probe,
                verified: &self.verified,
                settle: None,
                chaos: false,
                tolerances: &tolerances(),
            })
        }
    }

    fn verification(verdict: VerificationVerdict) -> Verification {
        Verification {
            committed_offset: 0,
            input_records: 10_000,
            expected: 0,
            output_records: 0,
            missing: 0,
            duplicated: 0,
            unexpected: 0,
            corrupted: 0,
            beyond_commit: 0,
            out_of_order: 0,
            verdict,
            message: String::new(),
        }
    }

    fn value(j: &Judgement, name: &str) -> f64 {
        j.metrics
            .get(name)
            .unwrap_or_else(|| panic!("{name} missing: {:?}", j.not_applicable))
            .value
    }

    #[test]
    fn a_steady_product_keeps_up_and_gets_its_latency_quoted() {
        let j = Crafted::new(20, |t| 1000.0 * t - 10.0).judge();
        assert_eq!(j.regime, Some(Regime::KeepUp));
        assert!(j.failure.is_none());
        assert!((value(&j, "consumed_per_s") - 1000.0).abs() < 1e-6);
        assert_eq!(value(&j, "latency_p50_ms"), 20.0);
        assert_eq!(value(&j, "added_p50_ms"), 15.0);
        assert_eq!(value(&j, "latency_max_ms"), 80.0);
        assert!((value(&j, "cpu_avg_pct") - 50.0).abs() < 1e-9);
        assert!((value(&j, "us_cpu_per_record") - 500.0).abs() < 1e-6);
        assert!(j.flags.is_empty(), "{:?}", j.flags);
        assert_eq!(j.series.unwrap().t_s.len(), 22);
    }

    /// 1 s intervals of 290 records each, p99 30 ms but at `spike`.
    fn latency_series(seconds: usize, spike: Option<usize>) -> crate::results::LatencySeries {
        let mut s = crate::results::LatencySeries::new(1000);
        for i in 0..seconds {
            let p99 = if spike == Some(i) { 1000.0 } else { 30.0 };
            s.t_s.push(i as f64 + 1.0);
            s.count.push(290);
            s.p50_ms.push(Some(20.0));
            s.p99_ms.push(Some(p99));
            s.max_ms.push(Some(p99));
        }
        s
    }

    #[test]
    fn a_stall_is_counted_and_flagged_and_withholds_no_latency() {
        let mut c = Crafted::new(10, |t| 1000.0 * t - 10.0);
        c.probe.intervals = Some(latency_series(10, None));
        let j = c.judge();
        assert_eq!(value(&j, "stalls"), 0.0);
        assert!(!j.flags.contains(&flag::STALLS));
        c.probe.intervals = Some(latency_series(10, Some(6)));
        let j = c.judge();
        assert_eq!(value(&j, "stalls"), 1.0);
        assert_eq!(j.metrics["stalls"].unit, "intervals");
        assert!(j.flags.contains(&flag::STALLS), "{:?}", j.flags);
        assert_eq!(value(&j, "latency_p50_ms"), 20.0);
    }

    #[test]
    fn the_products_rss_and_uss_stand_beside_its_pss() {
        // Crafted trees hold 10 MB PSS, twice that RSS, half that USS.
        let mut c = Crafted::new(10, |t| 1000.0 * t);
        let j = c.judge();
        assert_eq!(value(&j, "mem_avg_mb"), 10.0);
        assert_eq!(value(&j, "rss_avg_mb"), 20.0);
        assert_eq!(value(&j, "uss_avg_mb"), 5.0);
        c.samples[5].product.uss_bytes = None;
        let j = c.judge();
        assert!(!j.metrics.contains_key("uss_avg_mb"));
        assert!(j.not_applicable["uss_avg_mb"].contains("smaps_rollup"));
    }

    #[test]
    fn a_sawtooth_backlog_that_keeps_up_is_keep_up_with_coarse_commits() {
        for phase in [0.0, 0.4, 1.7, 3.2] {
            let j = Crafted::new(15, |t: f64| {
                1000.0 * (((t + phase) / 5.0).floor() * 5.0 - phase)
            })
            .judge();
            assert_eq!(
                j.regime,
                Some(Regime::KeepUp),
                "phase {phase}: {:?}",
                j.metrics
            );
            assert!(j.flags.contains(&flag::COARSE_COMMITS));
            assert!(j.metrics.contains_key("latency_p50_ms"));
        }
    }

    #[test]
    fn slow_linear_growth_is_saturated() {
        let j = Crafted::new(30, |t| 960.0 * t).judge();
        assert_eq!(j.regime, Some(Regime::Saturated));
        assert!((value(&j, "lag_drift") - 40.0 / 960.0).abs() < 1e-6);
        assert!(!j.metrics.contains_key("latency_p50_ms"));
        assert_eq!(
            j.not_applicable["latency"],
            "the run was saturated, not keep-up"
        );
    }

    #[test]
    fn a_shrinking_backlog_is_draining() {
        let j = Crafted::new(10, |t| 2000.0 * t - 20_000.0).judge();
        assert_eq!(j.regime, Some(Regime::Draining));
        assert!(j.not_applicable["latency"].contains("draining"));
    }

    #[test]
    fn a_step_in_the_committed_offset_is_inconsistent_flow_and_quotes_nothing() {
        // one commit seen, late in the window: the fit follows the step
        let j = Crafted::new(10, |t| if t < 10.5 { 2000.0 } else { 4048.0 }).judge();
        assert!(j.flags.contains(&flag::INCONSISTENT_FLOW), "{:?}", j.flags);
        for name in ["consumed_per_s", "us_cpu_per_record", "rows_per_s_per_core"] {
            assert!(!j.metrics.contains_key(name), "{name} quoted");
            assert!(j.not_applicable[name].contains("flow figures disagree"));
        }
        assert!(!j
            .metrics
            .keys()
            .any(|k| k.starts_with("latency_") || k.starts_with("added_")));
        assert!(j.not_applicable["flow"].contains("moved 1 time(s)"));
        assert!(j.not_applicable["flow"].contains("output/s"));
        assert!(j.metrics.contains_key("offered_per_s"));
        assert!(j.metrics.contains_key("output_per_s"));
        // the same product committing every second agrees with itself
        let j = Crafted::new(10, |t| 1000.0 * t.floor() - 10.0).judge();
        assert!(
            !j.flags.contains(&flag::INCONSISTENT_FLOW),
            "{:?}",
            j.not_applicable
        );
        assert!(j.metrics.contains_key("consumed_per_s"));
    }

    #[test]
    fn a_window_whose_cpu_per_record_falls_is_not_steady() {
        let mut c = Crafted::new(30, |t| 1000.0 * t - 10.0);
        assert!(!c.judge().flags.contains(&flag::NOT_STEADY));
        // CPU falling from 90 % to 40 % over the window, as a JVM compiling
        let mut ticks = 0.0;
        for (i, sample) in c.samples.iter_mut().enumerate() {
            ticks += 90.0 - 50.0 * i as f64 / 32.0;
            sample.product.ticks.insert((10, 1), ticks as u64);
        }
        let j = c.judge();
        assert!(j.flags.contains(&flag::NOT_STEADY), "{:?}", j.flags);
        let (first, last) = (
            value(&j, "cpu_per_record_first_third_us"),
            value(&j, "cpu_per_record_last_third_us"),
        );
        assert!(first > 1.5 * last, "{first} {last}");
    }

    #[test]
    fn one_sample_is_a_failure_not_a_regime() {
        let mut c = Crafted::new(5, |t| 1000.0 * t);
        c.samples.truncate(3);
        let j = c.judge();
        assert_eq!(j.regime, None);
        assert!(j.failure.unwrap().contains("1 sample(s)"));
    }

    #[test]
    fn a_restart_that_lowers_the_committed_offset_does_not_unconsume() {
        let j = Crafted::new(20, |t| {
            if (8.0..10.0).contains(&t) {
                1000.0 * t - 4000.0
            } else {
                1000.0 * t
            }
        })
        .judge();
        assert_eq!(j.regime, Some(Regime::KeepUp), "{:?}", j.metrics);
        assert!(value(&j, "consumed_per_s") > 900.0);
    }

    #[test]
    fn an_empty_histogram_quotes_no_latency() {
        let mut c = Crafted::new(10, |t| 1000.0 * t);
        c.probe.output = latency(0, 0.0);
        let j = c.judge();
        assert_eq!(j.regime, Some(Regime::KeepUp));
        assert!(!j.metrics.contains_key("latency_p50_ms"));
        assert!(!j.metrics.contains_key("added_p50_ms"));
        assert_eq!(
            j.not_applicable["latency"],
            "no output record arrived in the window"
        );
    }

    #[test]
    fn a_missing_floor_leaves_latency_but_no_added() {
        let mut c = Crafted::new(10, |t| 1000.0 * t);
        c.probe.floor = latency(0, 0.0);
        let j = c.judge();
        assert_eq!(value(&j, "latency_p50_ms"), 20.0);
        assert!(!j.metrics.contains_key("added_p50_ms"));
        assert!(!j.metrics.contains_key("floor_p50_ms"));
        assert_eq!(
            j.not_applicable["added_p50_ms"],
            "no floor record arrived in the window"
        );
    }

    #[test]
    fn a_generator_behind_during_keep_up_withholds_latency() {
        let mut c = Crafted::new(10, |t| 1000.0 * t);
        c.gendata = gendata(10_000, 150.0, 300.0);
        let j = c.judge();
        assert_eq!(j.regime, Some(Regime::KeepUp));
        assert!(j.flags.contains(&flag::GENERATOR_BEHIND));
        assert!(!j.metrics.contains_key("latency_p50_ms"));
        assert!(j.not_applicable["latency"].contains("gendata fell behind"));
    }

    #[test]
    fn a_generator_late_only_at_its_max_withholds_the_tail_alone() {
        let mut c = Crafted::new(10, |t| 1000.0 * t);
        c.gendata = gendata(10_000, 3.0, 250.0);
        let j = c.judge();
        assert!(!j.flags.contains(&flag::GENERATOR_BEHIND));
        assert_eq!(value(&j, "latency_p99_ms"), 40.0);
        assert!(!j.metrics.contains_key("latency_p999_ms"));
        assert!(!j.metrics.contains_key("latency_max_ms"));
        assert!(j.not_applicable["latency_max_ms"].contains("250.0 ms"));
    }

    #[test]
    fn an_unpaced_run_is_never_generator_behind() {
        let mut c = Crafted::new(10, |t| 1000.0 * t);
        c.config.rate = 0;
        c.gendata = gendata(10_000, 300.0, 400.0);
        let j = c.judge();
        assert!(!j.flags.contains(&flag::GENERATOR_BEHIND));
        assert!(j.metrics.contains_key("latency_max_ms"));
    }

    #[test]
    fn a_probe_that_trails_the_output_quotes_no_latency() {
        let mut c = Crafted::new(10, |t| 1000.0 * t);
        c.probe.lag = lag(12.5);
        let j = c.judge();
        assert!(j.flags.contains(&flag::PROBE_BEHIND));
        assert!(!j.metrics.contains_key("latency_p50_ms"));
        assert!(j.not_applicable["latency"].contains("12.5 ms worth"));
        assert_eq!(value(&j, "probe_lag_p99_ms"), 12.5);
        c.probe.lag = lag(9.0);
        let j = c.judge();
        assert!(!j.flags.contains(&flag::PROBE_BEHIND));
        assert!(j.metrics.contains_key("latency_p50_ms"));
    }

    #[test]
    fn slow_samples_are_counted_and_flagged() {
        let mut c = Crafted::new(10, |t| 1000.0 * t);
        c.samples[5].read_us = 25_000;
        c.samples[0].read_us = 25_000; // before the window: not counted
        let j = c.judge();
        assert_eq!(value(&j, "slow_samples"), 1.0);
        assert!(j.flags.contains(&flag::SLOW_SAMPLES));
    }

    #[test]
    fn verification_verdicts_become_flags() {
        let mut c = Crafted::new(10, |t| 1000.0 * t);
        c.verified = checked(verification(VerificationVerdict::Incomplete), None, (0, 0));
        let j = c.judge();
        assert!(j.flags.contains(&flag::VERIFICATION_INCOMPLETE));
        assert!(!j.flags.contains(&flag::VERIFICATION_FAILED));
        c.verified = checked(verification(VerificationVerdict::Failed), None, (0, 0));
        assert!(c.judge().flags.contains(&flag::VERIFICATION_FAILED));
    }

    /// A crafted drain of `records` at 100k/s: ready at 0 s, the first
    /// commit at 3 s, a commit every 10 ms after it, polls every 20 ms up to
    /// `until_s`; samples every second at 100 % of one core while draining.
    struct CraftedDrain {
        records: u64,
        progress: Vec<(i64, i64)>,
        samples: Vec<Sample>,
        config: RunConfig,
        prefill: GendataSummary,
        verified: Verified,
    }

    impl CraftedDrain {
        fn new(records: u64, until_s: f64) -> CraftedDrain {
            let committed_at = |t: f64| -> i64 {
                if t < 3.0 {
                    -1001
                } else {
                    let t = (t * 100.0).floor() / 100.0; // commits every 10 ms
                    ((t - 3.0) * 100_000.0).round().min(records as f64) as i64
                }
            };
            let polls = (until_s / 0.02).round() as i64;
            let progress = (0..=polls)
                .map(|k| (k * 20_000, committed_at(k as f64 * 0.02)))
                .collect();
            let samples = (0..=until_s.floor() as usize)
                .map(|i| {
                    let t = i as f64;
                    let busy = (t - 3.0).clamp(0.0, 5.0) as u64 * 100;
                    row(t, committed_at(t), records as i64, busy, 10)
                })
                .collect();
            let mut config = config(0);
            config.rate = 0;
            config.warmup_s = 0;
            config.drain_records = Some(records);
            let mut prefill = gendata(records, 900.0, 1500.0);
            prefill.records_acked = records;
            let mut verified = verification(VerificationVerdict::Passed);
            verified.committed_offset = records;
            verified.input_records = records;
            verified.output_records = records * 29 / 100;
            CraftedDrain {
                records,
                progress,
                samples,
                config,
                prefill,
                verified: checked(verified, Some(0.2), (1000, 0)),
            }
        }

        fn judge(&self) -> Judgement {
            judge_drain(&DrainInputs {
                records: self.records,
                ready_us: 0,
                progress: &self.progress,
                samples: &self.samples,
                ticks_per_s: 100.0,
                config: &self.config,
                workload: stateless(),
                prefill: &self.prefill,
                verified: &self.verified,
                bound_s: 60.0,
                tolerances: &tolerances(),
            })
        }
    }

    #[test]
    fn a_drain_is_timed_from_the_first_commit_seen_to_the_last() {
        let j = CraftedDrain::new(500_000, 10.0).judge();
        assert!(j.failure.is_none(), "{:?}", j.failure);
        assert_eq!(j.regime, Some(Regime::Draining));
        // first commit seen at 3.02 s (2000 records), the last at 8.00 s
        let expected = (500_000.0 - 2000.0) / (8.0 - 3.02);
        assert!((value(&j, "drain_capacity_per_s") - expected).abs() < 1e-6);
        assert!((value(&j, "drain_first_commit_s") - 3.02).abs() < 1e-9);
        assert!((value(&j, "drain_s") - 4.98).abs() < 1e-9);
        let slope = value(&j, "consumed_per_s");
        assert!((slope - 100_000.0).abs() < 1.0, "{slope}");
        assert!((value(&j, "cpu_avg_pct") - 100.0).abs() < 1e-9);
        assert!((value(&j, "rows_per_s_per_core") - expected).abs() < 1e-6);
        assert_eq!(j.metrics["drain_capacity_per_s"].better, Better::Higher);
    }

    #[test]
    fn a_drain_quotes_no_latency_and_is_never_generator_behind() {
        // the pre-fill was 900 ms "late" at p99: unpaced, that means nothing
        let j = CraftedDrain::new(500_000, 10.0).judge();
        assert!(j.flags.is_empty(), "{:?}", j.flags);
        assert!(j.sanity.is_some_and(|s| s.verdict == SanityVerdict::Ok));
        assert!(!j.metrics.keys().any(|k| k.starts_with("latency")));
        assert!(j.not_applicable["latency"].contains("no schedule"));
        assert!(!j.metrics.contains_key("offered_per_s"));
        assert!(!j.metrics.contains_key("lag_drift"));
    }

    #[test]
    fn a_drain_that_runs_out_of_time_quotes_no_capacity() {
        let j = CraftedDrain::new(500_000, 6.0).judge();
        assert!(!j.metrics.contains_key("drain_capacity_per_s"));
        assert!(!j.metrics.contains_key("drain_s"));
        let why = &j.not_applicable["drain_capacity_per_s"];
        assert!(why.contains("300000 of 500000"), "{why}");
        assert!(j.metrics.contains_key("consumed_per_s"));
    }

    #[test]
    fn a_drain_committed_in_one_go_quotes_no_capacity() {
        let mut d = CraftedDrain::new(500_000, 10.0);
        for (at, c) in d.progress.iter_mut() {
            *c = if *at >= 5_000_000 { 500_000 } else { -1001 };
        }
        let j = d.judge();
        let why = &j.not_applicable["drain_capacity_per_s"];
        assert!(why.contains("use --drain 5000000 or more"), "{why}");
        assert!(!j.metrics.contains_key("drain_s"), "no drain time of 0 s");
        assert_eq!(&j.not_applicable["drain_s"], why);
        d.progress.iter_mut().for_each(|p| p.1 = -1001);
        let j = d.judge();
        assert!(j.not_applicable["drain_capacity_per_s"].contains("committed nothing"));
        assert!(!j.metrics.contains_key("drain_first_commit_s"));
    }

    #[test]
    fn a_drain_over_too_few_commits_names_the_size_that_would_measure() {
        // 200,000 records, commits every second: the first at 3 s covers
        // 50,000, the next at 4 s the rest.
        let mut d = CraftedDrain::new(200_000, 10.0);
        for (at, c) in d.progress.iter_mut() {
            *c = match *at {
                t if t < 3_000_000 => -1001,
                t if t < 4_000_000 => 50_000,
                _ => 200_000,
            };
        }
        d.config.commit_interval_ms = 1000;
        let span = drain_span(&d.progress, 200_000).unwrap();
        assert_eq!(span.commits, 1);
        let j = d.judge();
        let why = &j.not_applicable["drain_capacity_per_s"];
        assert!(why.contains("1 commit(s)"), "{why}");
        assert!(why.contains("use --drain 1500000 or more"), "{why}");
        assert!(!j.metrics.contains_key("drain_s"));
    }

    #[test]
    fn drain_sizes_are_rounded_up_to_two_digits() {
        assert_eq!(drain_size_for(437_000.0, 1.0), 4_400_000);
        assert_eq!(drain_size_for(150_000.0, 1.0), 1_500_000);
        assert_eq!(drain_size_for(3.0, 0.01), 1);
    }

    #[test]
    fn a_short_prefill_fails_the_drain() {
        let mut d = CraftedDrain::new(500_000, 10.0);
        d.prefill.records_acked = 499_000;
        let j = d.judge();
        assert!(j.failure.unwrap().contains("499000 of 500000"));
    }
}
