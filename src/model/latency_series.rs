//! Latency over time: the probe's figures per sample interval of the window,
//! beside the window's whole histogram.

use serde::{Deserialize, Serialize};

/// The window's output latency per interval of `interval_ms`, anchored at the
/// window's start (the last interval may be shorter). The vectors are
/// parallel, one entry per interval; percentiles are `null` for an interval
/// in which no output record arrived.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySeries {
    /// The intervals' length, ms (the run's `sample_interval_ms`).
    pub interval_ms: u64,
    /// Seconds from the window's start at each interval's end.
    pub t_s: Vec<f64>,
    /// Output records that arrived in the interval.
    pub count: Vec<u64>,
    pub p50_ms: Vec<Option<f64>>,
    pub p99_ms: Vec<Option<f64>>,
    pub max_ms: Vec<Option<f64>>,
}

impl LatencySeries {
    /// An empty series of intervals of `interval_ms`.
    pub fn new(interval_ms: u64) -> LatencySeries {
        LatencySeries {
            interval_ms,
            ..LatencySeries::default()
        }
    }

    /// How many intervals the series holds.
    pub fn len(&self) -> usize {
        self.t_s.len()
    }

    pub fn is_empty(&self) -> bool {
        self.t_s.is_empty()
    }
}
