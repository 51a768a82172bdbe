//! The configuration a run used, as its record keeps it: two runs compare
//! only when these match.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::client::ClientProfile;
use crate::model::isolation::Isolation;
use crate::model::settings::{CommitIntervals, EtlConfig, Profile};

/// The configuration a run used: two runs compare only when these match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// Records/s gendata offers; 0 when it sends as fast as it can (read
    /// it through [`RunConfig::is_paced`], or `gendata::schedule::Pacing`).
    pub rate: u64,
    /// The warm-up: fixed, or the least one when `warmup_cap_s` is set.
    pub warmup_s: u64,
    /// A steady-state warm-up: from `warmup_s` until the product is steady,
    /// at most this long; absent for a fixed warm-up (`--warmup`, a drain,
    /// an unpaced or an ETL run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_cap_s: Option<u64>,
    pub window_s: u64,
    pub seed: u64,
    /// The interval this run's line committed at (its delivery mode's).
    pub commit_interval_ms: u64,
    /// Both delivery modes' intervals, the bench's commit policy; absent in
    /// records from before the modes had their own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_intervals: Option<CommitIntervals>,
    /// The client profile the product was handed; records from before the
    /// profile carry the settings every product then had.
    #[serde(default = "ClientProfile::before_profiles")]
    pub client: ClientProfile,
    /// The `--set` settings the run was made with, as given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<String>,
    /// The uniform profile every line shares, or the product's experts'
    /// (`--profile expert`): never compared with each other.
    #[serde(default, skip_serializing_if = "Profile::is_uniform")]
    pub profile: Profile,
    /// Keys of the product's own `settings` this run had otherwise (its
    /// expert profile, a line's `product.KEY=VALUE`), as applied.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub product_settings: BTreeMap<String, serde_json::Value>,
    pub parallelism: u32,
    /// The form the product ran in (`run.deploy`): `embedded`, its `start`
    /// command, or a deployment of its product.yaml such as `cluster`.
    #[serde(
        default = "embedded_deployment",
        skip_serializing_if = "is_embedded_deployment"
    )]
    pub deployment: String,
    /// The hosts the product ran on (bench.yaml `hosts:`), in the order its
    /// processes were placed; empty when it ran on this host.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    pub sample_interval_ms: u64,
    pub input_partitions: i32,
    /// A drain run: the input pre-filled with this many records before the
    /// product started (rate, warm-up and window are then 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drain_records: Option<u64>,
    /// An ETL run's decoder, format and sink settings (bench.yaml `etl:`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etl: Option<EtlConfig>,
    /// Which CPUs each role was given (bench.yaml `isolation`); records
    /// from before the setting read as `none`.
    #[serde(default)]
    pub isolation: Isolation,
}

/// The deployment every product has: its `start` command as one process tree.
pub const EMBEDDED: &str = "embedded";

fn embedded_deployment() -> String {
    EMBEDDED.to_string()
}

fn is_embedded_deployment(name: &String) -> bool {
    name == EMBEDDED
}

impl RunConfig {
    /// Whether gendata sent on a schedule (at a rate above 0).
    pub fn is_paced(&self) -> bool {
        self.rate > 0
    }

    /// Both modes' commit intervals; for an older record, the one interval
    /// every line then shared.
    pub fn commit_policy(&self) -> CommitIntervals {
        self.commit_intervals.unwrap_or(CommitIntervals {
            exactly_once: self.commit_interval_ms,
            at_least_once: self.commit_interval_ms,
        })
    }
}
