//! The latency histograms the records keep: which runs' count, decoded and
//! merged. The latency tables, the CDF, the data files and the exports all
//! read them from here.

use base64::Engine;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;

use super::lines::LineRuns;
use crate::results::{Regime, RunRecord};

/// The keep-up runs of a line's batch that carry latency.
pub(super) fn latency_runs<'a>(line: &LineRuns<'a>) -> Vec<&'a RunRecord> {
    latency_runs_of(&line.batch)
}

/// The keep-up runs of `runs` that carry latency.
pub(super) fn latency_runs_of<'a>(runs: &[&'a RunRecord]) -> Vec<&'a RunRecord> {
    runs.iter()
        .filter(|r| r.regime == Some(Regime::KeepUp) && r.metrics.contains_key("latency_p50_ms"))
        .copied()
        .collect()
}

/// The runs' histograms merged (exact for repeats), microseconds; None when
/// no run kept a readable histogram.
pub(super) fn merged_histogram(runs: &[&RunRecord]) -> Option<Histogram<u64>> {
    // A histogram that resizes itself: a decoded one keeps the range of its
    // own values, and adding a run with a larger maximum to it would fail.
    let mut merged = crate::probe::new_histogram();
    for run in runs {
        let Some(h) = run.latency_histogram.as_deref().and_then(decode_histogram) else {
            continue;
        };
        merged.add(&h).ok()?;
    }
    Some(merged).filter(|h| !h.is_empty())
}

/// A stored histogram (base64 of HdrHistogram V2 + deflate), microseconds.
pub fn decode_histogram(encoded: &str) -> Option<Histogram<u64>> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    Deserializer::new().deserialize(&mut &bytes[..]).ok()
}
