//! The resource figures of a record: CPU and memory per process tree over the
//! window, the host's load, and the per-interval series behind the charts.

use serde::{Deserialize, Serialize};

use crate::sampler::MemoryInstrument;

/// CPU and memory of one process tree over the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceSummary {
    pub cpu_avg_pct: f64,
    pub cpu_p95_pct: f64,
    pub mem_avg_mb: f64,
    pub mem_max_mb: f64,
    /// CPU intervals in the window.
    pub samples: usize,
    /// PSS, or RSS where any sample could not read PSS.
    pub instrument: MemoryInstrument,
}

/// The host over the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostLoad {
    pub busy_avg_pct: f64,
    pub busy_max_pct: f64,
}

/// Every process tree's resources, and the host's load, over the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resources {
    pub product: Option<ResourceSummary>,
    /// The local broker; absent for an external one.
    pub broker: Option<ResourceSummary>,
    pub gendata: Option<ResourceSummary>,
    pub probe: Option<ResourceSummary>,
    pub host: Option<HostLoad>,
}

/// Per-interval series for time-series charts, over the whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Seconds from the window's start (negative during warm-up), at each interval's end.
    pub t_s: Vec<f64>,
    pub offered_per_s: Vec<f64>,
    pub consumed_per_s: Vec<f64>,
    pub backlog: Vec<i64>,
    pub product_cpu_pct: Vec<f64>,
    pub product_mem_mb: Vec<f64>,
}
