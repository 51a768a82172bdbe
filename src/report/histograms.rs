//! The latency histograms the records keep: which runs' count, decoded and
//! merged. The latency tables, the CDF, the data files and the exports all
//! read them from here.

use hdrhistogram::Histogram;
use messages::histogram::decode as decode_histogram;

use super::lines::LineRuns;
use crate::results::figure::LATENCY_P50_MS;
use crate::results::{Regime, RunRecord};

/// The keep-up runs of a line's batch that carry latency.
pub(super) fn latency_runs<'a>(line: &LineRuns<'a>) -> Vec<&'a RunRecord> {
    latency_runs_of(&line.batch)
}

/// The keep-up runs of `runs` that carry latency.
pub(super) fn latency_runs_of<'a>(runs: &[&'a RunRecord]) -> Vec<&'a RunRecord> {
    runs.iter()
        .filter(|r| r.regime == Some(Regime::KeepUp) && r.metrics.contains_key(LATENCY_P50_MS.name))
        .copied()
        .collect()
}

/// The runs' histograms merged (exact for repeats), microseconds; None when
/// no run kept a readable histogram.
pub(super) fn merged_histogram(runs: &[&RunRecord]) -> Option<Histogram<u64>> {
    crate::stats::histogram::merge(
        runs.iter()
            .filter_map(|run| run.latency_histogram.as_deref().and_then(decode_histogram)),
    )
}
