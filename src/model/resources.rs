//! The resource figures of a record: CPU and memory per process tree over the
//! window, the host's load, and the per-interval series behind the charts.

use serde::{Deserialize, Serialize};

use super::isolation::CgroupAccount;

/// How memory was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemoryInstrument {
    Pss,
    Rss,
}

/// CPU and memory of one process tree over the window.
///
/// `mem_*` is the headline (PSS); RSS and USS beside it bound it from above
/// and below. Both are absent in records written before they were kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceSummary {
    pub cpu_avg_pct: f64,
    pub cpu_p95_pct: f64,
    /// PSS summed over the tree, MB (see `instrument`).
    pub mem_avg_mb: f64,
    pub mem_max_mb: f64,
    /// RSS summed over the tree, MB: a page shared by n processes counts n times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_avg_mb: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_max_mb: Option<f64>,
    /// USS (private pages) summed over the tree, MB; absent when any sample
    /// could not read a process's smaps_rollup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uss_avg_mb: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uss_max_mb: Option<f64>,
    /// CPU intervals in the window.
    pub samples: usize,
    /// PSS, or RSS where any sample could not read PSS.
    pub instrument: MemoryInstrument,
    /// The most processes the tree had at a sample (a cluster deployment's
    /// members with their children); absent in records from before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes_max: Option<usize>,
}

/// The host over the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostLoad {
    pub busy_avg_pct: f64,
    pub busy_max_pct: f64,
    /// Time the hypervisor ran something else on this host's CPUs, % of all
    /// of them; absent in records from before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_avg_pct: Option<f64>,
    /// CPU of the processes that are none of the run's (neither the suite's
    /// tree, the broker's, the sink's nor the kernel's own threads), % of
    /// one core; absent in records from before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside_avg_pct: Option<f64>,
}

/// Every process tree's resources, and the host's load, over the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resources {
    pub product: Option<ResourceSummary>,
    /// The local broker; absent for an external one.
    pub broker: Option<ResourceSummary>,
    pub gendata: Option<ResourceSummary>,
    pub probe: Option<ResourceSummary>,
    /// The local ClickHouse of an ETL run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sink: Option<ResourceSummary>,
    pub host: Option<HostLoad>,
    /// The product's cgroup over the window, where the suite could make
    /// one: its CPU is the product's `cpu_avg_pct`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product_cgroup: Option<CgroupAccount>,
    /// The CPUs the product's processes were allowed (each distinct
    /// `Cpus_allowed_list` of /proc/PID/status over the window): what an
    /// engine sized its thread pools from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub product_cpus_allowed: Vec<String>,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_written_before_rss_and_uss_reads_without_them() {
        let old = r#"{"cpu_avg_pct":50.0,"cpu_p95_pct":80.0,"mem_avg_mb":100.0,
            "mem_max_mb":120.0,"samples":30,"instrument":"pss"}"#;
        let s: ResourceSummary = serde_json::from_str(old).unwrap();
        assert_eq!(s.mem_avg_mb, 100.0);
        assert_eq!((s.rss_avg_mb, s.rss_max_mb), (None, None));
        assert_eq!((s.uss_avg_mb, s.uss_max_mb), (None, None));
        assert_eq!(s.processes_max, None);
    }

    #[test]
    fn rss_and_uss_are_written_beside_pss_and_read_back() {
        let s = ResourceSummary {
            cpu_avg_pct: 50.0,
            cpu_p95_pct: 80.0,
            mem_avg_mb: 100.0,
            mem_max_mb: 120.0,
            rss_avg_mb: Some(150.0),
            rss_max_mb: Some(170.0),
            uss_avg_mb: None,
            uss_max_mb: None,
            samples: 30,
            instrument: MemoryInstrument::Rss,
            processes_max: Some(3),
        };
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["rss_avg_mb"], 150.0);
        assert!(json.get("uss_avg_mb").is_none());
        assert_eq!(serde_json::from_value::<ResourceSummary>(json).unwrap(), s);
    }
}
