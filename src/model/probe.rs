//! What the latency probe reports: the output's latency and the setup
//! floor as percentiles with their histograms, and how far the probe itself
//! trailed the output.

use anyhow::{anyhow, Result};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::latency_series::LatencySeries;

/// A run whose probe trailed the output by more than this many ms worth of
/// output at p99 is flagged `probe-behind`.
pub const PROBE_BEHIND_LIMIT_MS: f64 = 10.0;

/// Percentiles of one histogram, in milliseconds, with the histogram itself.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Records that arrived in the window.
    pub count: u64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
    /// The whole histogram (microseconds), HdrHistogram V2 + deflate, base64.
    pub histogram: String,
}

/// What the probe reports: the product's latency and the setup floor.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProbeSummary {
    pub output: LatencySummary,
    pub floor: LatencySummary,
    /// Output records without a readable `ts_us` (counted, not timed).
    pub unreadable: u64,
    /// How far the probe's own consumer trailed the output's end.
    pub lag: ProbeLag,
    /// The output's latency per interval of the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intervals: Option<LatencySeries>,
}

impl LatencySummary {
    /// Percentiles of `histogram` (microseconds) in milliseconds.
    pub fn from_histogram(histogram: &Histogram<u64>) -> Result<LatencySummary> {
        let ms = |q: f64| histogram.value_at_quantile(q) as f64 / 1000.0;
        let encoded = messages::histogram::encode(histogram)
            .map_err(|err| anyhow!("probe: serializing a histogram: {err:?}"))?;
        Ok(LatencySummary {
            count: histogram.len(),
            p50_ms: ms(0.5),
            p90_ms: ms(0.9),
            p99_ms: ms(0.99),
            p999_ms: ms(0.999),
            max_ms: histogram.max() as f64 / 1000.0,
            histogram: encoded,
        })
    }
}

/// How far the probe's own consumer trailed the output's end during the window.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProbeLag {
    /// Comparisons of the probe's position with the output's end, taken in the
    /// window once some output had been timed (the output rate was known).
    pub samples: u64,
    /// The most output records the probe trailed by at one sample.
    pub trailing_records_max: u64,
    /// 99th percentile of the trailing records as ms worth of output, at the
    /// output rate observed in the window up to the sample.
    pub trailing_p99_ms: f64,
    /// The largest such ms worth.
    pub trailing_max_ms: f64,
    /// Samples lost: reads of the output's end that failed or took over 1 s
    /// (or, should it ever happen, an unreadable position).
    pub failed_queries: u64,
    /// 99th percentile of how long a read of the output's end took, ms.
    pub query_p99_ms: f64,
    /// The longest such read, ms.
    pub query_max_ms: f64,
}
