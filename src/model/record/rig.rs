//! The record of one arm of the CPU rig, which keeps the run record's
//! conventions without a broker, a delivery mode or a window.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::metric::Metric;
use super::variant::Variant;
use crate::model::host::HostInfo;

/// One arm of one `suite rig cpu`: the run record's conventions (schema,
/// ids, host, figures with unit and direction) without a broker, a delivery
/// mode or a window, which the rig does not have.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RigRecord {
    pub schema: u32,
    pub run_id: String,
    /// The arms of one `suite rig cpu` share it.
    pub batch_id: String,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub bench_version: u32,
    pub host: HostInfo,
    pub product: String,
    pub version: String,
    /// Always `cpu-rig`.
    pub workload: String,
    pub variant: Variant,
    pub config: RigConfig,
    pub metrics: BTreeMap<String, Metric>,
    pub logs: PathBuf,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite_commit: Option<String>,
}

/// What a rig run replayed and how often.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RigConfig {
    pub seed: u64,
    /// Distinct datums in the replayed ring.
    pub distinct_datums: usize,
    pub warmup_datums: usize,
    pub timed_datums: usize,
    pub counted_datums: usize,
    pub repetitions: usize,
    pub block_rows: usize,
    pub shards: usize,
}
