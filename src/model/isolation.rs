//! Which CPUs each role of a run was given (bench.yaml `isolation`), and
//! what the kernel's own accounting of the product's cgroup said: the
//! layout is part of the bench point, the account sits beside the /proc
//! samples it cross-checks.

use serde::{Deserialize, Serialize};

/// The CPUs of each role, as Linux CPU lists (`0`, `1-3`, `0,2`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuLayout {
    /// The product's whole process tree.
    pub product: String,
    /// The local broker's nodes (and the local ClickHouse of an ETL run).
    pub broker: String,
    pub gendata: String,
    /// The latency probe; the suite's own sampler shares the harness's CPUs.
    pub probe: String,
}

/// How a run's roles were placed on the host's CPUs.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Isolation {
    /// Every role on every CPU, the scheduler's choice: records from before
    /// the setting read as this.
    #[default]
    None,
    /// Each role on its own CPUs.
    Pinned(CpuLayout),
}

impl Isolation {
    /// `none`, or `product 1 · broker 0 · gendata 0 · probe 0`.
    pub fn label(&self) -> String {
        match self {
            Isolation::None => "none".to_string(),
            Isolation::Pinned(l) => format!(
                "product {} · broker {} · gendata {} · probe {}",
                l.product, l.broker, l.gendata, l.probe
            ),
        }
    }
}

/// The product's cgroup over the window: CPU time from the kernel's usage
/// counter (every process that ran in it, however briefly), and the /proc
/// samples' figure for the same span.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CgroupAccount {
    /// `v1` (cpuacct) or `v2` (cpu.stat).
    pub hierarchy: String,
    /// CPU over the window from the cgroup, % of one core: the product's
    /// `cpu_avg_pct`.
    pub cpu_avg_pct: f64,
    /// The /proc samples' average over the same samples, % of one core.
    pub proc_cpu_avg_pct: f64,
    /// The most memory charged to the cgroup at once since it was made
    /// (page cache it filled included, pages resident before it started
    /// not), MB; absent where the kernel keeps no peak.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_peak_mb: Option<f64>,
}

impl CgroupAccount {
    /// How far the /proc figure lies from the cgroup's, as a share of the
    /// cgroup's (0 when both are 0).
    pub fn disagreement(&self) -> f64 {
        let gap = (self.cpu_avg_pct - self.proc_cpu_avg_pct).abs();
        if self.cpu_avg_pct > 0.0 {
            gap / self.cpu_avg_pct
        } else if gap > 0.0 {
            f64::INFINITY
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isolation_reads_and_writes_as_the_record_holds_it() {
        let pinned = Isolation::Pinned(CpuLayout {
            product: "1".into(),
            broker: "0".into(),
            gendata: "0".into(),
            probe: "0".into(),
        });
        let json = serde_json::to_string(&pinned).unwrap();
        assert_eq!(
            json,
            r#"{"pinned":{"product":"1","broker":"0","gendata":"0","probe":"0"}}"#
        );
        assert_eq!(serde_json::from_str::<Isolation>(&json).unwrap(), pinned);
        assert_eq!(
            serde_json::to_string(&Isolation::None).unwrap(),
            r#""none""#
        );
        assert_eq!(pinned.label(), "product 1 · broker 0 · gendata 0 · probe 0");
    }

    #[test]
    fn the_disagreement_is_a_share_of_the_cgroups_figure() {
        let account = |cgroup: f64, proc: f64| CgroupAccount {
            hierarchy: "v1".into(),
            cpu_avg_pct: cgroup,
            proc_cpu_avg_pct: proc,
            mem_peak_mb: None,
        };
        assert!((account(50.0, 45.0).disagreement() - 0.1).abs() < 1e-12);
        assert_eq!(account(0.0, 0.0).disagreement(), 0.0);
        assert_eq!(account(0.0, 1.0).disagreement(), f64::INFINITY);
    }
}
