//! The run record: one JSON object per run, schema-versioned, with a unit
//! and a direction on every figure. docs/results-schema.md describes the
//! shape for readers.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::broker::BrokerInfo;
use super::client::ClientProfile;
use super::gendata::GendataSummary;
use super::host::HostInfo;
use super::interval::MedianInterval;
use super::isolation::Isolation;
use super::latency_series::LatencySeries;
use super::resources::{Resources, Series};
use super::settings::{CommitIntervals, Delivery, EtlConfig, Profile};

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

/// A run's place in a sweep: a grid of lines against rates or against
/// parallelism, run as batches, and for a rate sweep the bisection that
/// follows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepTag {
    /// Shared by every run of one `suite sweep`, its grid and its bisection.
    pub id: String,
    pub kind: SweepKind,
    /// A rate sweep's bound on added p99 (bench.yaml `sweep.p99_bound_ms`)
    /// when it ran: the maximum sustainable throughput is judged against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_bound_ms: Option<f64>,
    /// The bisection step that ran this rate, from 1; absent for the grid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bisect_step: Option<u32>,
}

/// What a sweep varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SweepKind {
    /// The offered rate (`config.rate`).
    Rate,
    /// `run.parallelism` (`config.parallelism`).
    Parallelism,
}

impl SweepKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SweepKind::Rate => "rate",
            SweepKind::Parallelism => "parallelism",
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

/// The configuration a run used: two runs compare only when these match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
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
    /// Both modes' commit intervals; for an older record, the one interval
    /// every line then shared.
    pub fn commit_policy(&self) -> CommitIntervals {
        self.commit_intervals.unwrap_or(CommitIntervals {
            exactly_once: self.commit_interval_ms,
            at_least_once: self.commit_interval_ms,
        })
    }
}

/// Sanity of one run: did the product do the workload's work?
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "StoredSanity")]
pub struct Sanity {
    /// Output records / consumed records in the window; absent when nothing
    /// was consumed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selectivity: Option<f64>,
    /// What the workload owes per input record over exactly the input range
    /// consumed in the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_selectivity: Option<f64>,
    /// |selectivity / expected - 1|.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selectivity_deviation: Option<f64>,
    /// bench.yaml's `tolerances.selectivity`.
    pub tolerance: f64,
    pub selectivity_ok: bool,
    /// The workload's own figures (stateless: `breach_rate`, the share of
    /// output records with `sla_status` breach; windowed-lowcard: panes per
    /// window, seen and expected).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub figures: BTreeMap<String, f64>,
    /// Outputs whose content the workload recomputed (stateless: the derived
    /// fields; passthrough: every byte; windowed-lowcard: the aggregates).
    pub content_checked: u64,
    /// Of those, the ones that were wrong.
    pub content_mismatched: u64,
    pub verdict: SanityVerdict,
    pub message: String,
}

/// A sanity block as stored, in this version's form or an older one, where
/// the stateless figures were fields of their own.
#[derive(Deserialize)]
struct StoredSanity {
    #[serde(default)]
    selectivity: Option<f64>,
    #[serde(default)]
    expected_selectivity: Option<f64>,
    #[serde(default)]
    selectivity_deviation: Option<f64>,
    tolerance: f64,
    selectivity_ok: bool,
    #[serde(default)]
    figures: BTreeMap<String, f64>,
    #[serde(default)]
    breach_rate: Option<f64>,
    #[serde(alias = "enrichment_checked")]
    content_checked: u64,
    #[serde(alias = "enrichment_mismatched")]
    content_mismatched: u64,
    verdict: SanityVerdict,
    message: String,
}

impl From<StoredSanity> for Sanity {
    fn from(s: StoredSanity) -> Sanity {
        let mut figures = s.figures;
        if let Some(rate) = s.breach_rate {
            figures.entry("breach_rate".to_string()).or_insert(rate);
        }
        Sanity {
            selectivity: s.selectivity,
            expected_selectivity: s.expected_selectivity,
            selectivity_deviation: s.selectivity_deviation,
            tolerance: s.tolerance,
            selectivity_ok: s.selectivity_ok,
            figures,
            content_checked: s.content_checked,
            content_mismatched: s.content_mismatched,
            verdict: s.verdict,
            message: s.message,
        }
    }
}

/// The sanity checks' verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SanityVerdict {
    Ok,
    Warning,
}

/// Exact verification of one run's whole output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    /// The product's committed input offset: it owns the output of `[0, this)`.
    pub committed_offset: u64,
    /// Records gendata wrote to the input topic.
    pub input_records: u64,
    /// Output records owed for `[0, committed_offset)`.
    pub expected: u64,
    /// Records read from the output topic (read_committed).
    pub output_records: u64,
    /// Owed records that never appeared.
    pub missing: u64,
    /// Extra copies of records already seen.
    pub duplicated: u64,
    /// Outputs that match nothing the workload owes (a filtered record, a
    /// foreign one, a pane of a window that never closed).
    pub unexpected: u64,
    /// Records with a field that differs from what the input implies.
    pub corrupted: u64,
    /// Correct records for input past the committed offset: allowed, since a
    /// product may write before it commits.
    pub beyond_commit: u64,
    /// First copies out of the order the workload requires: after a later
    /// record of the same key (stateless, noted), after a later record
    /// (passthrough, noted), after a pane of a later window (windowed, late:
    /// a failure).
    #[serde(default)]
    pub out_of_order: u64,
    pub verdict: VerificationVerdict,
    pub message: String,
}

/// Exact verification's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VerificationVerdict {
    /// Every input record's output is there, nothing else is.
    Passed,
    /// Something is missing, unexpected or corrupted (or duplicated on an
    /// exactly-once line).
    Failed,
    /// Nothing wrong was found, but the product committed only part of its
    /// input by the end of the settle phase: the rest was never checked.
    Incomplete,
}

impl VerificationVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            VerificationVerdict::Passed => "passed",
            VerificationVerdict::Failed => "failed",
            VerificationVerdict::Incomplete => "incomplete",
        }
    }
}

/// The faults a chaos run injected (`--chaos`, `suite chaos`), and how the
/// product came through each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "StoredChaos")]
pub struct Chaos {
    /// Whether the product was started again, with the same identity, after
    /// each kill.
    pub restart: bool,
    /// Each SIGKILL of the product's whole tree, in order.
    pub kills: Vec<Kill>,
    /// Kills after which output flowed again.
    pub kills_survived: usize,
    /// The median and the longest of the kills' recovery times; absent when
    /// no kill was recovered from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_p50_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_max_ms: Option<f64>,
    /// The local broker's SIGKILL and restart, when the run had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broker_restart: Option<BrokerRestart>,
}

/// One SIGKILL of the product's tree, or of one member of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Kill {
    /// Seconds into the window.
    pub at_s: f64,
    /// Processes of the product's tree that were killed.
    pub killed_processes: usize,
    /// The member of the product's deployment killed alone (`taskmanager-1`);
    /// absent when the whole product was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<String>,
    /// From the kill until a newly committed output record was visible;
    /// `null` when output did not flow again before the next fault or the
    /// window's end.
    pub recovery_ms: Option<f64>,
}

/// A node of the local broker killed with SIGKILL and started again on its
/// data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BrokerRestart {
    /// Seconds into the window.
    pub at_s: f64,
    /// The node killed, in a cluster (node ids count from 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<u32>,
    /// Whether that node led the input partition when it was killed.
    #[serde(default)]
    pub was_leader: bool,
    /// From the kill until another node led the input partition: the
    /// cluster's leader failover. `null` when the killed node did not lead
    /// it, or had no other node to fail over to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failover_ms: Option<f64>,
    /// From the kill until the node answered again as part of the cluster.
    pub outage_ms: f64,
    /// From the kill until a newly committed output record was visible;
    /// `null` when output did not flow again before the window's end.
    pub recovery_ms: Option<f64>,
}

impl Chaos {
    /// The record of `kills` and `broker_restart`, with the kills' figures.
    pub fn new(restart: bool, kills: Vec<Kill>, broker_restart: Option<BrokerRestart>) -> Chaos {
        let mut recoveries: Vec<f64> = kills.iter().filter_map(|k| k.recovery_ms).collect();
        recoveries.sort_by(f64::total_cmp);
        let p50 = match recoveries.len() {
            0 => None,
            n if n % 2 == 1 => Some(recoveries[n / 2]),
            n => Some((recoveries[n / 2 - 1] + recoveries[n / 2]) / 2.0),
        };
        Chaos {
            restart,
            kills_survived: recoveries.len(),
            recovery_p50_ms: p50,
            recovery_max_ms: recoveries.last().copied(),
            kills,
            broker_restart,
        }
    }
}

/// A chaos block as stored: this version's, or the one-kill form of older
/// records (`kill_at_s`, `killed_processes`, `recovery_ms` at the top).
#[derive(Deserialize)]
#[serde(untagged)]
enum StoredChaos {
    Current {
        restart: bool,
        kills: Vec<Kill>,
        #[serde(default)]
        broker_restart: Option<BrokerRestart>,
    },
    OneKill {
        kill_at_s: u64,
        restart: bool,
        killed_processes: usize,
        recovery_ms: Option<f64>,
    },
}

impl From<StoredChaos> for Chaos {
    fn from(stored: StoredChaos) -> Chaos {
        match stored {
            StoredChaos::Current {
                restart,
                kills,
                broker_restart,
            } => Chaos::new(restart, kills, broker_restart),
            StoredChaos::OneKill {
                kill_at_s,
                restart,
                killed_processes,
                recovery_ms,
            } => Chaos::new(
                restart,
                vec![Kill {
                    at_s: kill_at_s as f64,
                    killed_processes,
                    member: None,
                    recovery_ms,
                }],
                None,
            ),
        }
    }
}

/// The flags a record may carry, in the order they are set
/// (docs/results-schema.md says when each applies).
pub mod flag {
    pub const UNREADABLE_OUTPUT: &str = "unreadable-output";
    pub const GENERATOR_BEHIND: &str = "generator-behind";
    pub const HOST_SATURATED: &str = "host-saturated";
    pub const CHAOS: &str = "chaos";
    pub const SANITY_WARNING: &str = "sanity-warning";
    pub const VERIFICATION_FAILED: &str = "verification-failed";
    pub const VERIFICATION_INCOMPLETE: &str = "verification-incomplete";
    pub const COARSE_COMMITS: &str = "coarse-commits";
    pub const PROBE_BEHIND: &str = "probe-behind";
    pub const SLOW_SAMPLES: &str = "slow-samples";
    /// An interval of the window stalled (docs/methodology.md gives the rule).
    pub const STALLS: &str = "stalls";
    /// The flow figures disagree with one another: no capacity, efficiency
    /// or latency is quoted.
    pub const INCONSISTENT_FLOW: &str = "inconsistent-flow";
    /// The warm-up hit its cap before the product was steady, or the
    /// window's first and last thirds differ in CPU per record.
    pub const NOT_STEADY: &str = "not-steady";
    /// Steal time, or processes that are none of the run's, took more CPU
    /// than bench.yaml's tolerances allow over the window.
    pub const NOISY_HOST: &str = "noisy-host";
    /// The product's CPU from its cgroup and from the /proc samples
    /// disagree beyond bench.yaml's `cpu_mismatch`.
    pub const CPU_MISMATCH: &str = "cpu-mismatch";
}

impl RunRecord {
    /// Whether the record carries `flag` (one of [`flag`]).
    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }
}

/// Which way a figure is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Higher,
    Lower,
}

/// One figure with its unit and direction; a figure of repetitions (the
/// CPU rig's) is their median, with its 95 % confidence interval and n.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    pub value: f64,
    pub unit: String,
    pub better: Better,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<usize>,
}

impl Metric {
    pub fn new(value: f64, unit: &str, better: Better) -> Metric {
        Metric {
            value,
            unit: unit.to_string(),
            better,
            ci95: None,
            n: None,
        }
    }

    /// The median of repetitions, with its interval and n.
    pub fn of_repetitions(summary: MedianInterval, unit: &str, better: Better) -> Metric {
        Metric {
            ci95: summary.ci95,
            n: Some(summary.n),
            ..Metric::new(summary.median, unit, better)
        }
    }
}

/// Which arm of the Avro pipeline a record measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Variant {
    /// fast-borrowed, fast-owned, apache-owned, or none (the raw arm).
    pub decoder: String,
    /// The insert format: rowbinary or native; absent for a decode arm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// Events per Kafka message (batch datum): rows come out at most this
    /// many to a message. Absent on the raw arm, which has `payload`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<u32>,
    /// The raw arm: `raw`, one row per message holding its bytes, so its
    /// rows/s does not compare with the Avro arms'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<String>,
    /// The CPU rig's stage: decode or pipeline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<String>,
}

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
