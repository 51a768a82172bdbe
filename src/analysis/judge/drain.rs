//! A drain run's judgement: how fast the product committed a pre-filled
//! backlog, over which span, at what cost, and whether its output is the
//! workload's. A drain has no schedule and no window.

use super::super::sanity::SanityInputs;
use super::super::window::{self, Sample};
use super::{
    close, flag_host, flag_slow_samples, put_efficiency, put_sanity, put_verification, resources,
    Helpers, Judgement, Verified,
};
use crate::config::Tolerances;
use crate::gendata::schedule::Pacing;
use crate::model::gendata::GendataSummary;
use crate::results::figure::{
    ADDED_P50_MS, ADDED_P99_MS, CONSUMED_PER_S, CPU_AVG_PCT, DRAIN_CAPACITY_PER_S,
    DRAIN_FIRST_COMMIT_S, DRAIN_S, LAG_DRIFT, OFFERED_PER_S, SLOW_SAMPLES,
};
use crate::results::{Regime, Resources, RunConfig};
use crate::workloads::TopicOutput;

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
    /// (read time, output high watermark) of the same polls.
    pub output_progress: &'a [(i64, i64)],
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
pub(super) fn drain_size_for(per_s: f64, cadence_s: f64) -> u64 {
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

/// Polls of the output that must see it grow for its progress to time a
/// drain: at 20 ms apart, a tenth of a second of output.
pub const MIN_OUTPUT_MOVES: usize = 5;

/// Drain capacity from the output's progress, records/s: the output grows
/// with the input the product has read (a workload whose every record owes
/// its output at once), so the input covered from the first poll that saw
/// output to the first that saw all of it, over the seconds between the
/// two. Polled every few milliseconds, it times a drain shorter than a few
/// commits; the records before the first output are left out, as their time
/// holds the start-up.
pub fn output_capacity(output_progress: &[(i64, i64)], records: u64) -> Result<f64, String> {
    output_timing(output_progress, records).map(|(per_s, _)| per_s)
}

/// [`output_capacity`] with the seconds it was timed over.
fn output_timing(output_progress: &[(i64, i64)], records: u64) -> Result<(f64, f64), String> {
    let total = output_progress.iter().map(|&(_, o)| o).max().unwrap_or(0);
    let Some(first) = output_progress.iter().position(|&(_, o)| o > 0) else {
        return Err("the product wrote no output while it drained".into());
    };
    let (first_us, first_out) = output_progress[first];
    let Some(end) = output_progress.iter().position(|&(_, o)| o >= total) else {
        return Err("the output was never read at its end".into());
    };
    let end_us = output_progress[end].0;
    let moves = output_progress[first..=end.max(first)]
        .windows(2)
        .filter(|pair| pair[1].1 > pair[0].1)
        .count();
    if moves < MIN_OUTPUT_MOVES || end_us <= first_us {
        return Err(format!(
            "the output grew at {moves} poll(s) after its first, too few to time the drain \
             (at least {MIN_OUTPUT_MOVES})"
        ));
    }
    let covered = records as f64 * (total - first_out) as f64 / total as f64;
    let seconds = (end_us - first_us) as f64 / 1e6;
    Ok((covered / seconds, seconds))
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
    j.not_applies_to("latency", why_latency);
    for figure in [&ADDED_P50_MS, &ADDED_P99_MS] {
        j.not_applies(figure, why_latency);
    }
    j.not_applies(
        &OFFERED_PER_S,
        "a drain run offers its records before the product starts",
    );
    j.not_applies(
        &LAG_DRIFT,
        "a drain run's backlog only shrinks: its regime is draining by design",
    );
    let span = drain_span(m.progress, m.records);
    let capacity = put_drain_figures(&mut j, m, span.as_ref());
    let in_span = span_samples(m, span.as_ref());
    let resources = put_span_resources(&mut j, m, &in_span, &capacity);
    judge_drain_work(&mut j, m);
    close(
        &mut j,
        Regime::Draining,
        m.samples,
        m.ready_us,
        m.ticks_per_s,
        resources,
    );
    j
}

/// The drain's capacity and its times; the capacity, or why there is none.
fn put_drain_figures(
    j: &mut Judgement,
    m: &DrainInputs<'_>,
    span: Option<&DrainSpan>,
) -> Result<f64, String> {
    let by_commits = match span {
        Some(span) => drain_capacity(span, m.records, m.ready_us, m.config.commit_interval_ms),
        None => Err(format!(
            "the product committed nothing within the drain bound of {:.0} s",
            m.bound_s
        )),
    };
    // A workload whose output keeps pace with its input is timed by the
    // output, polled every few milliseconds, whatever the commit cadence;
    // windowed output comes in panes and is timed by the commits. drain_s
    // is the span the capacity was timed over.
    let by_output = if m.workload.needs_schedule() {
        Err(String::new())
    } else {
        output_timing(m.output_progress, m.records)
    };
    let commit_seconds = span.and_then(|s| s.end_us.map(|end| (end - s.first_us) as f64 / 1e6));
    let timed: Result<(f64, Option<f64>), String> = match (by_output, by_commits) {
        (Ok((per_s, seconds)), _) => Ok((per_s, Some(seconds))),
        (Err(_), Ok(per_s)) => Ok((per_s, commit_seconds)),
        (Err(why), Err(by_commits)) if why.is_empty() => Err(by_commits),
        (Err(by_output), Err(by_commits)) => {
            Err(format!("{by_commits}; by the output: {by_output}"))
        }
    };
    match &timed {
        Ok((per_s, seconds)) => {
            j.put(&DRAIN_CAPACITY_PER_S, *per_s);
            if let Some(seconds) = seconds {
                j.put(&DRAIN_S, *seconds);
            }
        }
        Err(why) => {
            j.not_applies(&DRAIN_CAPACITY_PER_S, why);
            j.not_applies(&DRAIN_S, why);
        }
    }
    if let Some(span) = span {
        j.put(
            &DRAIN_FIRST_COMMIT_S,
            (span.first_us - m.ready_us) as f64 / 1e6,
        );
    }
    timed.map(|(per_s, _)| per_s)
}

/// The samples of the span: from the first commit on, up to the first
/// sample that saw the whole backlog committed.
fn span_samples(m: &DrainInputs<'_>, span: Option<&DrainSpan>) -> Vec<Sample> {
    let Some(span) = span else {
        return Vec::new();
    };
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

/// The consumed rate, resources and efficiency over the span's samples.
fn put_span_resources(
    j: &mut Judgement,
    m: &DrainInputs<'_>,
    in_span: &[Sample],
    capacity: &Result<f64, String>,
) -> Resources {
    let span_s = match (in_span.first(), in_span.last()) {
        (Some(a), Some(b)) => (b.committed_at_us - a.committed_at_us) as f64 / 1e6,
        _ => 0.0,
    };
    let flow = window::flow(&window::offset_reads(in_span, &[]), span_s);
    let short = "the drain spanned fewer than two samples; use a larger --drain";
    match &flow {
        Some(flow) => j.put(&CONSUMED_PER_S, flow.consumed_per_s),
        None => j.not_applies(&CONSUMED_PER_S, short),
    }
    let helpers = Helpers {
        gendata: false,
        probe: false,
        sink: false,
    };
    let resources = resources(in_span, m.ticks_per_s, helpers);
    flag_host(j, &resources, m.tolerances);
    let slow_samples = flag_slow_samples(j, in_span);
    j.put(&SLOW_SAMPLES, slow_samples as f64);
    match (&resources.product, capacity) {
        (Some(p), Ok(per_s)) => put_efficiency(j, p, *per_s),
        (Some(p), Err(_)) => put_efficiency(j, p, flow.map_or(0.0, |f| f.consumed_per_s)),
        (None, _) => j.not_applies(&CPU_AVG_PCT, short),
    }
    resources
}

/// Sanity and verification over the whole input.
fn judge_drain_work(j: &mut Judgement, m: &DrainInputs<'_>) {
    if let Verified::Checked(checked) = m.verified {
        let consumed = checked.verification.committed_offset.min(m.records);
        // The pre-fill is unpaced: no schedule.
        put_sanity(
            j,
            SanityInputs {
                spec: m.workload.sanity(),
                output: checked.verification.output_records,
                consumed,
                expected_selectivity: (m.config.input_partitions == 1)
                    .then(|| {
                        m.workload
                            .expected_selectivity(m.config.seed, Pacing::Unpaced, 0, consumed)
                    })
                    .flatten(),
                tolerance: m.tolerances.selectivity,
                content: checked.content,
                figures: checked.figures.clone(),
            },
        );
    }
    put_verification(j, m.verified);
}
