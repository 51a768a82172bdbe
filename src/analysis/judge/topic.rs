//! A topic run's judgement: the window's flow and regime, its latency as
//! the probe timed it, the product's resources, and whether the output is
//! the workload's, all of it, once.

use std::collections::BTreeMap;

use super::super::flow_checks::{flow_disagreements, FlowFigures};
use super::super::sanity::SanityInputs;
use super::super::window::{OffsetRead, Sample};
use super::super::{added_over_floor, steady};
use super::{
    close, fail_on_delivery_errors, flag_generator_behind, flag_host, flag_slow_samples,
    put_efficiency, put_sanity, put_settle, put_verification, resources, windowed,
    withhold_if_inconsistent, Helpers, Judgement, Settle, Verified, Windowed, RATE,
};
use crate::config::Tolerances;
use crate::gendata::schedule::Schedule;
use crate::model::gendata::GendataSummary;
use crate::model::probe::{ProbeSummary, PROBE_BEHIND_LIMIT_MS};
use crate::results::{flag, Better, Regime, RunConfig};
use crate::workloads::TopicOutput;

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

/// What the window's flow and the tolerances make of a topic run, before
/// its figures: the rates, the selectivity owed and whether the latency can
/// be trusted.
struct Flowed<'s> {
    windowed: Windowed<'s>,
    offered_per_s: f64,
    output_per_s: f64,
    consumed: u64,
    expected_selectivity: Option<f64>,
    generator_behind: bool,
    probe_behind: bool,
}

/// The window's flow and what follows from it, or why the window cannot
/// be judged.
fn flowed<'s>(m: &JudgeInputs<'s>) -> Result<Flowed<'s>, String> {
    let window_s = m.config.window_s as f64;
    let windowed = windowed(
        m.samples,
        m.window_start,
        m.offset_polls,
        window_s,
        m.tolerances,
    )?;
    let consumed = windowed.flow.consumed.round() as u64;
    let expected_selectivity = (m.config.input_partitions == 1)
        .then(|| {
            m.workload.expected_selectivity(
                m.config.seed,
                m.schedule,
                windowed.flow.committed_first,
                windowed.flow.committed_first + consumed,
            )
        })
        .flatten();
    Ok(Flowed {
        windowed,
        offered_per_s: m.gendata.window_records as f64 / window_s,
        output_per_s: m.probe.output.count as f64 / window_s,
        consumed,
        expected_selectivity,
        generator_behind: false,
        probe_behind: false,
    })
}

/// Judges one topic run.
pub fn judge(m: &JudgeInputs<'_>) -> Judgement {
    let mut j = Judgement::default();
    let mut f = match flowed(m) {
        Ok(f) => f,
        Err(why) => {
            j.failure = Some(why);
            return j;
        }
    };
    let window_s = m.config.window_s as f64;
    // A run with a crash injected has its flow disturbed by design.
    let disagreements = if m.chaos {
        Vec::new()
    } else {
        flow_disagreements(&FlowFigures {
            flow: &f.windowed.flow,
            window_s,
            regime: f.windowed.regime,
            offered_per_s: f.offered_per_s,
            output_per_s: Some(f.output_per_s),
            expected_selectivity: f.expected_selectivity,
            offered_vs_input: m.tolerances.offered_vs_input,
            output_vs_consumed: m.tolerances.output_vs_consumed,
            lag_drift: m.tolerances.lag_drift,
        })
    };
    let helpers = Helpers {
        gendata: true,
        probe: true,
        sink: false,
    };
    let resources = resources(f.windowed.window, m.ticks_per_s, helpers);
    let slow_samples = flag_run(&mut j, m, &mut f, &resources);
    put_throughput(&mut j, m, &f, slow_samples);
    if let Some(p) = &resources.product {
        put_efficiency(&mut j, p, f.windowed.flow.consumed_per_s);
    }
    put_latency(&mut j, m, &f);
    judge_work(&mut j, m, &f);
    withhold_if_inconsistent(&mut j, &disagreements);
    close(
        &mut j,
        f.windowed.regime,
        m.samples,
        m.window_start_us,
        m.ticks_per_s,
        resources,
    );
    // latency over time: a stall is a flag the page shows; it withholds nothing
    if let (Some(latency), Some(series)) = (&m.probe.intervals, &j.series) {
        let stalls = super::super::latency_over_time::judge_stalls(latency, series).count();
        j.put("stalls", stalls as f64, "intervals", Better::Lower);
        if stalls > 0 {
            j.flags.push(flag::STALLS);
        }
    }
    j
}

/// The flags on the run as a whole, in the order the record lists them;
/// the count of slow samples.
fn flag_run(
    j: &mut Judgement,
    m: &JudgeInputs<'_>,
    f: &mut Flowed<'_>,
    resources: &crate::results::Resources,
) -> usize {
    if m.probe.unreadable > 0 {
        j.flags.push(flag::UNREADABLE_OUTPUT);
    }
    f.generator_behind = flag_generator_behind(j, m.gendata, m.config, m.tolerances);
    f.probe_behind = m.probe.lag.trailing_p99_ms > PROBE_BEHIND_LIMIT_MS;
    if f.probe_behind {
        j.flags.push(flag::PROBE_BEHIND);
    }
    flag_host(j, resources, m.tolerances);
    if f.windowed.flow.coarse_commits {
        j.flags.push(flag::COARSE_COMMITS);
    }
    let slow_samples = flag_slow_samples(j, f.windowed.window);
    fail_on_delivery_errors(j, m.gendata);
    // A keep-up window whose CPU per record moved between its first and
    // last thirds was still warming up (or cooling down).
    if f.windowed.regime == Regime::KeepUp {
        if let Some(thirds) = steady::cpu_thirds(f.windowed.window, m.ticks_per_s) {
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
    slow_samples
}

/// Throughput, the regime's evidence, the helpers' own lateness and the
/// settle phase.
fn put_throughput(j: &mut Judgement, m: &JudgeInputs<'_>, f: &Flowed<'_>, slow_samples: usize) {
    let flow = &f.windowed.flow;
    let lag = &m.probe.lag;
    j.put("offered_per_s", f.offered_per_s, RATE, Better::Higher);
    j.put("consumed_per_s", flow.consumed_per_s, RATE, Better::Higher);
    j.put("input_per_s", flow.input_per_s, RATE, Better::Higher);
    j.put("output_per_s", f.output_per_s, RATE, Better::Higher);
    let figures = [
        (
            "unreadable_output_records",
            m.probe.unreadable as f64,
            "records",
            Better::Lower,
        ),
        ("lag_drift", flow.drift, "ratio", Better::Lower),
        (
            "backlog_start",
            flow.backlog_first as f64,
            "records",
            Better::Lower,
        ),
        (
            "backlog_end",
            flow.backlog_last as f64,
            "records",
            Better::Lower,
        ),
        (
            "commit_moves",
            flow.commit_moves as f64,
            "intervals",
            Better::Higher,
        ),
        (
            "slow_samples",
            slow_samples as f64,
            "samples",
            Better::Lower,
        ),
        (
            "gendata_behind_p99_ms",
            m.gendata.behind_p99_ms,
            "ms",
            Better::Lower,
        ),
        (
            "gendata_behind_max_ms",
            m.gendata.behind_max_ms,
            "ms",
            Better::Lower,
        ),
        ("probe_lag_p99_ms", lag.trailing_p99_ms, "ms", Better::Lower),
        ("probe_lag_max_ms", lag.trailing_max_ms, "ms", Better::Lower),
        (
            "probe_lag_samples",
            lag.samples as f64,
            "samples",
            Better::Higher,
        ),
    ];
    for (name, value, unit, better) in figures {
        j.put(name, value, unit, better);
    }
    put_settle(j, m.settle);
    let window = f.windowed.window;
    let (first, last) = (&window[0], &window[window.len() - 1]);
    if let (Some(start), Some(end)) = (first.extra_high, last.extra_high) {
        j.put(
            "extra_records_per_record",
            (end - start) as f64 / flow.consumed.max(1.0),
            "records/record",
            Better::Lower,
        );
    }
}

/// Why the run's latency is not quoted, when it is not: it is quoted only
/// where it means something (the product kept up, gendata kept its
/// schedule, the probe kept up, and records were timed at all).
fn latency_withheld(m: &JudgeInputs<'_>, f: &Flowed<'_>) -> Option<String> {
    if f.windowed.regime != Regime::KeepUp {
        Some(format!(
            "the run was {}, not keep-up",
            f.windowed.regime.as_str()
        ))
    } else if f.generator_behind {
        Some(format!(
            "gendata fell behind its schedule (p99 {:.1} ms at delivery, limit {} ms)",
            m.gendata.behind_p99_ms, m.tolerances.generator_behind_ms
        ))
    } else if f.probe_behind {
        Some(format!(
            "the probe trailed the output by {:.1} ms worth at p99 (limit {PROBE_BEHIND_LIMIT_MS} ms)",
            m.probe.lag.trailing_p99_ms
        ))
    } else if m.probe.output.count == 0 {
        Some("no output record arrived in the window".to_string())
    } else {
        None
    }
}

/// The setup floor, and the output's latency and what it adds over the
/// floor, where they can be quoted.
fn put_latency(j: &mut Judgement, m: &JudgeInputs<'_>, f: &Flowed<'_>) {
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
    if let Some(why) = latency_withheld(m, f) {
        for name in ["latency", "added_p50_ms", "added_p99_ms"] {
            j.not_applies(name, &why);
        }
        return;
    }
    let out = &m.probe.output;
    j.put("latency_p50_ms", out.p50_ms, "ms", Better::Lower);
    j.put("latency_p90_ms", out.p90_ms, "ms", Better::Lower);
    j.put("latency_p99_ms", out.p99_ms, "ms", Better::Lower);
    j.put("latency_count", out.count as f64, "records", Better::Higher);
    // A tail that gendata itself may have made is no product's tail.
    if m.config.rate > 0 && m.gendata.behind_max_ms > m.tolerances.generator_behind_ms {
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

/// Sanity and verification: did the product do the workload's work, all
/// of it, once?
fn judge_work(j: &mut Judgement, m: &JudgeInputs<'_>, f: &Flowed<'_>) {
    if m.chaos {
        j.flags.push(flag::CHAOS);
    }
    let (content, figures) = match m.verified {
        Verified::Checked(checked) => (checked.content, checked.figures.clone()),
        Verified::Skipped(_) => ((0, 0), BTreeMap::new()),
    };
    put_sanity(
        j,
        SanityInputs {
            spec: m.workload.sanity(),
            output: m.probe.output.count,
            consumed: f.consumed,
            expected_selectivity: f.expected_selectivity,
            tolerance: m.tolerances.selectivity,
            content,
            figures,
        },
    );
    put_verification(j, m.verified);
}
