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
    withhold_if_inconsistent, Helpers, Judgement, Settle, Verified, Windowed,
};
use crate::config::Tolerances;
use crate::gendata::schedule::Pacing;
use crate::model::gendata::GendataSummary;
use crate::model::probe::{ProbeSummary, PROBE_BEHIND_LIMIT_MS};
use crate::results::figure::{
    ADDED_P50_MS, ADDED_P99_MS, BACKLOG_END, BACKLOG_START, COMMIT_MOVES, CONSUMED_PER_S,
    CPU_PER_RECORD_FIRST_THIRD_US, CPU_PER_RECORD_LAST_THIRD_US, EXTRA_RECORDS_PER_RECORD,
    FLOOR_P50_MS, FLOOR_P99_MS, GENDATA_BEHIND_MAX_MS, GENDATA_BEHIND_P99_MS, INPUT_PER_S,
    LAG_DRIFT, LATENCY_COUNT, LATENCY_MAX_MS, LATENCY_P50_MS, LATENCY_P90_MS, LATENCY_P999_MS,
    LATENCY_P99_MS, OFFERED_PER_S, OUTPUT_PER_S, PROBE_LAG_MAX_MS, PROBE_LAG_P99_MS,
    PROBE_LAG_SAMPLES, SLOW_SAMPLES, STALLS, UNREADABLE_OUTPUT_RECORDS,
};
use crate::results::{flag, Regime, RunConfig};
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
    /// gendata's pacing.
    pub pacing: Pacing,
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
                m.pacing,
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
        j.put(&STALLS, stalls as f64);
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
            j.put(&CPU_PER_RECORD_FIRST_THIRD_US, us(thirds.first));
            j.put(&CPU_PER_RECORD_LAST_THIRD_US, us(thirds.last));
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
    j.put(&OFFERED_PER_S, f.offered_per_s);
    j.put(&CONSUMED_PER_S, flow.consumed_per_s);
    j.put(&INPUT_PER_S, flow.input_per_s);
    j.put(&OUTPUT_PER_S, f.output_per_s);
    let figures = [
        (&UNREADABLE_OUTPUT_RECORDS, m.probe.unreadable as f64),
        (&LAG_DRIFT, flow.drift),
        (&BACKLOG_START, flow.backlog_first as f64),
        (&BACKLOG_END, flow.backlog_last as f64),
        (&COMMIT_MOVES, flow.commit_moves as f64),
        (&SLOW_SAMPLES, slow_samples as f64),
        (&GENDATA_BEHIND_P99_MS, m.gendata.behind_p99_ms),
        (&GENDATA_BEHIND_MAX_MS, m.gendata.behind_max_ms),
        (&PROBE_LAG_P99_MS, lag.trailing_p99_ms),
        (&PROBE_LAG_MAX_MS, lag.trailing_max_ms),
        (&PROBE_LAG_SAMPLES, lag.samples as f64),
    ];
    for (figure, value) in figures {
        j.put(figure, value);
    }
    put_settle(j, m.settle);
    let window = f.windowed.window;
    let (first, last) = (&window[0], &window[window.len() - 1]);
    if let (Some(start), Some(end)) = (first.extra_high, last.extra_high) {
        j.put(
            &EXTRA_RECORDS_PER_RECORD,
            (end - start) as f64 / flow.consumed.max(1.0),
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
        j.put(&FLOOR_P50_MS, m.probe.floor.p50_ms);
        j.put(&FLOOR_P99_MS, m.probe.floor.p99_ms);
    } else {
        for figure in [&FLOOR_P50_MS, &FLOOR_P99_MS, &ADDED_P50_MS, &ADDED_P99_MS] {
            j.not_applies(figure, "no floor record arrived in the window");
        }
    }
    if let Some(why) = latency_withheld(m, f) {
        j.not_applies_to("latency", &why);
        for figure in [&ADDED_P50_MS, &ADDED_P99_MS] {
            j.not_applies(figure, &why);
        }
        return;
    }
    let out = &m.probe.output;
    j.put(&LATENCY_P50_MS, out.p50_ms);
    j.put(&LATENCY_P90_MS, out.p90_ms);
    j.put(&LATENCY_P99_MS, out.p99_ms);
    j.put(&LATENCY_COUNT, out.count as f64);
    // A tail that gendata itself may have made is no product's tail.
    if m.config.is_paced() && m.gendata.behind_max_ms > m.tolerances.generator_behind_ms {
        let why = format!(
            "gendata's max lateness {:.1} ms exceeds the limit {} ms",
            m.gendata.behind_max_ms, m.tolerances.generator_behind_ms
        );
        j.not_applies(&LATENCY_P999_MS, &why);
        j.not_applies(&LATENCY_MAX_MS, &why);
    } else {
        j.put(&LATENCY_P999_MS, out.p999_ms);
        j.put(&LATENCY_MAX_MS, out.max_ms);
    }
    let added = [
        (&ADDED_P50_MS, out.p50_ms, m.probe.floor.p50_ms),
        (&ADDED_P99_MS, out.p99_ms, m.probe.floor.p99_ms),
    ];
    for (figure, product, floor) in added.into_iter().filter(|_| floor_seen) {
        j.maybe(
            figure,
            added_over_floor(product, floor),
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
