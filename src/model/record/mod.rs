//! The run record: one JSON object per run, schema-versioned, with a unit
//! and a direction on every figure. docs/results-schema.md describes the
//! shape for readers.

mod chaos;
pub mod flag;
mod metric;
mod rig;
mod run_config;
mod sanity;
mod sweep;
mod variant;
mod verification;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::broker::BrokerInfo;
use super::gendata::GendataSummary;
use super::host::HostInfo;
use super::latency_series::LatencySeries;
use super::resources::{Resources, Series};
use super::settings::Delivery;

pub use chaos::{BrokerRestart, Chaos, Kill};
pub use metric::{Better, Metric};
pub use rig::{RigConfig, RigRecord};
pub use run_config::{RunConfig, EMBEDDED};
pub use sanity::{Sanity, SanityVerdict};
pub use sweep::{SweepKind, SweepTag};
pub use variant::Variant;
pub use verification::{Verification, VerificationVerdict};

/// Bumped whenever the record's shape changes incompatibly.
pub const SCHEMA_VERSION: u32 = 1;

/// One run's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRecord {
    pub schema: u32,
    pub run_id: String,
    /// Runs started by one `suite run` or `suite batch` invocation share a batch.
    pub batch_id: String,
    /// The run's round within its batch, 1-based: each round runs every line
    /// of the batch once, so two lines' runs of one round form a pair.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    /// The run's place within its round, 1-based: the batch rotates its
    /// lines' order from round to round, so each line runs at each place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<u32>,
    /// The run's line as the batch was asked for it, 1-based, before any
    /// rotation: two entries of one line and version (an A/A check) are
    /// told apart by it, and a release check's baseline is entry 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<u32>,
    /// The sweep the run belongs to (`suite sweep`): its id, what it sweeps,
    /// and for a bisection's run, its step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepTag>,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub bench_version: u32,
    pub host: HostInfo,
    /// What each host of `config.hosts` is, read over SSH when the batch
    /// connected; the product's CPU and memory were sampled there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub product_hosts: Vec<PlacedHost>,
    pub broker: BrokerInfo,
    pub product: String,
    pub line: String,
    pub version: String,
    pub workload: String,
    /// The Avro pipeline's arm (avro-etl runs): decoder, insert format and
    /// events per message, or the raw arm's payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<Variant>,
    pub delivery: Delivery,
    pub config: RunConfig,
    pub status: Status,
    /// Why the run failed; absent when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// keep-up, saturated or draining, from the lag drift; absent when a run
    /// failed before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regime: Option<Regime>,
    /// Named conditions that qualify the figures (`generator-behind`, ...).
    #[serde(default)]
    pub flags: Vec<String>,
    pub metrics: BTreeMap<String, Metric>,
    /// Figures that do not apply to this run, with the reason.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub not_applicable: BTreeMap<String, String>,
    /// CPU and memory of the product's tree, each harness process and the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Resources>,
    /// Per-interval series over the whole run, for time-series charts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<Series>,
    /// gendata's own account of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gendata: Option<GendataSummary>,
    /// Are we benching the same thing: selectivity, the workload's own
    /// figures and its content check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sanity: Option<Sanity>,
    /// The output read back whole and matched against the deterministic input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<Verification>,
    /// The crash injected with `--chaos`, and how long output took to resume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chaos: Option<Chaos>,
    /// The probe's latency histogram (microseconds), HdrHistogram V2 + deflate,
    /// base64: repeats can be merged exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_histogram: Option<String>,
    /// The probe's latency per sample interval of the window (p50, p99, max
    /// and count per interval), which the `stalls` figure is judged from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_series: Option<LatencySeries>,
    /// Where the run's logs are kept.
    pub logs: PathBuf,
    /// The suite's git commit (`git rev-parse --short HEAD`) when the run was
    /// made; absent when the suite did not run from a git checkout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite_commit: Option<String>,
}

/// A host a product ran on, as its record names it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlacedHost {
    /// `ssh://user@host:port`, as bench.yaml gives it.
    pub address: String,
    pub identity: HostInfo,
}

/// Whether the product kept up with the offered rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Regime {
    /// The backlog stayed flat: a sustainable point, latency is meaningful.
    KeepUp,
    /// The backlog grew: consumed/s is the capacity, latency is unbounded.
    Saturated,
    /// The backlog shrank: still eating warm-up backlog.
    Draining,
}

impl Regime {
    pub fn as_str(self) -> &'static str {
        match self {
            Regime::KeepUp => "keep-up",
            Regime::Saturated => "saturated",
            Regime::Draining => "draining",
        }
    }
}

/// How a run went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Failed,
}

impl RunRecord {
    /// Whether the record carries `flag` (one of [`flag`]).
    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }
}
