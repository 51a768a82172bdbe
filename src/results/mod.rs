//! The result record (one JSON object per run, schema-versioned, a unit and a
//! direction on every figure) and the JSONL store it is appended to.
//! docs/results-schema.md describes the shape for readers.

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::analysis::interval::MedianInterval;
use crate::broker::BrokerInfo;
use crate::config::{ClientProfile, CommitIntervals, Delivery, EtlConfig, Profile};
use crate::gendata::GendataSummary;
use crate::host::HostInfo;

mod latency_series;
mod resources;

pub use latency_series::LatencySeries;
pub use resources::{HostLoad, ResourceSummary, Resources, Series};

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
    /// RFC 3339, UTC.
    pub started_at: String,
    pub bench_version: u32,
    pub host: HostInfo,
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
    pub sample_interval_ms: u64,
    pub input_partitions: i32,
    /// A drain run: the input pre-filled with this many records before the
    /// product started (rate, warm-up and window are then 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drain_records: Option<u64>,
    /// An ETL run's decoder, format and sink settings (bench.yaml `etl:`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etl: Option<EtlConfig>,
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

/// One SIGKILL of the product's tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Kill {
    /// Seconds into the window.
    pub at_s: f64,
    /// Processes of the product's tree that were killed.
    pub killed_processes: usize,
    /// From the kill until a newly committed output record was visible;
    /// `null` when output did not flow again before the next fault or the
    /// window's end.
    pub recovery_ms: Option<f64>,
}

/// The local broker killed with SIGKILL and started again on its data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BrokerRestart {
    /// Seconds into the window.
    pub at_s: f64,
    /// From the kill until the broker answered again.
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

/// The CPU rig's results file in a results folder: its records are
/// [`RigRecord`]s, not run records.
pub const RIG_FILE: &str = "cpu-rig.jsonl";

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

/// Appends rig records to `dir`'s [`RIG_FILE`], each a line of its own.
pub fn append_rig_records(dir: &Path, records: &[RigRecord]) -> Result<PathBuf> {
    let path = dir.join(RIG_FILE);
    let mut lines = String::new();
    for record in records {
        lines.push_str(&serde_json::to_string(record)?);
        lines.push('\n');
    }
    append_lines(dir, &path, lines)?;
    Ok(path)
}

/// The rig records of `dir` (none without a [`RIG_FILE`]), and the lines
/// that are not rig records.
pub fn read_rig_records(dir: &Path) -> Result<ResultsFile<RigRecord>> {
    let path = dir.join(RIG_FILE);
    if !path.exists() {
        return Ok(ResultsFile {
            records: Vec::new(),
            skipped: Vec::new(),
        });
    }
    read_lines_of(&path)
}

/// The JSONL file of `workload` in `dir`.
pub fn results_file(dir: &Path, workload: &str) -> PathBuf {
    dir.join(format!("{workload}.jsonl"))
}

/// Creates `dir` if missing and proves it can be written (a probe file is
/// created and removed), so a folder that cannot take a record is found
/// before a run starts, not after it.
pub fn ensure_writable(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let probe = dir.join(format!(".write-check-{}", std::process::id()));
    std::fs::File::create(&probe)?;
    std::fs::remove_file(&probe)
}

/// Appends `record` as one line to its workload's file. The line goes out in a
/// single write on a file opened for appending, so a reader or an interrupted
/// run never leaves half a line behind.
pub fn append_record(dir: &Path, record: &RunRecord) -> Result<PathBuf> {
    let path = results_file(dir, &record.workload);
    let mut line = serde_json::to_string(record)?;
    line.push('\n');
    append_lines(dir, &path, line)?;
    Ok(path)
}

/// Appends whole `lines` to `path` in `dir` (created if missing) in one
/// write, synced.
fn append_lines(dir: &Path, path: &Path, mut lines: String) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut file = OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    // A file whose last line was cut short (a hand edit, a full disk) would
    // swallow these lines into that broken one: start a line of our own.
    if ends_mid_line(&file).with_context(|| format!("reading {}", path.display()))? {
        lines.insert(0, '\n');
    }
    file.write_all(lines.as_bytes())
        .and_then(|()| file.sync_data())
        .with_context(|| format!("appending to {}", path.display()))
}

/// A line of a results file that is not a run record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}: not a run record: {reason}", path.display())]
pub struct SkippedLine {
    pub path: PathBuf,
    /// 1-based.
    pub line: usize,
    /// What the JSON parser said.
    pub reason: String,
}

/// The records of one results file (run records, or the rig's), and the
/// lines that are not records.
#[derive(Debug)]
pub struct ResultsFile<R = RunRecord> {
    pub records: Vec<R>,
    pub skipped: Vec<SkippedLine>,
}

fn ends_mid_line(file: &std::fs::File) -> std::io::Result<bool> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(false);
    }
    let mut last = [0u8];
    file.read_exact_at(&mut last, len - 1)?;
    Ok(last[0] != b'\n')
}

/// Reads every record of a JSONL file. A line that does not parse is set
/// aside with its reason, so one broken line never hides the others; only a
/// file that cannot be read is an error.
pub fn read_results_file(path: &Path) -> Result<ResultsFile> {
    read_lines_of(path)
}

/// Reads every line of a JSONL file as an `R`, setting aside those that
/// are not.
fn read_lines_of<R: serde::de::DeserializeOwned>(path: &Path) -> Result<ResultsFile<R>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut file = ResultsFile {
        records: Vec::new(),
        skipped: Vec::new(),
    };
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str(line) {
            Ok(record) => file.records.push(record),
            Err(err) => file.skipped.push(SkippedLine {
                path: path.to_path_buf(),
                line: i + 1,
                reason: err.to_string(),
            }),
        }
    }
    Ok(file)
}

/// Reads every record of a JSONL file; a line that does not parse is an error
/// naming the file and line.
pub fn read_records(path: &Path) -> Result<Vec<RunRecord>> {
    let file = read_results_file(path)?;
    match file.skipped.into_iter().next() {
        Some(bad) => Err(bad.into()),
        None => Ok(file.records),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(run_id: &str) -> RunRecord {
        RunRecord {
            schema: SCHEMA_VERSION,
            run_id: run_id.into(),
            batch_id: "b".into(),
            round: None,
            position: None,
            started_at: "2026-11-30T05:00:00Z".into(),
            bench_version: 1,
            host: HostInfo {
                hostname: "h".into(),
                cpu_model: "c".into(),
                cores: 2,
                threads: Some(2),
                cpu_mhz: Some(2000),
                memory_mb: 1,
                kernel: "k".into(),
                machine_id_hash: None,
            },
            broker: BrokerInfo {
                kind: "local".into(),
                version: Some("apache-kafka 4.1.1".into()),
                bootstrap: "127.0.0.1:1".into(),
                started_for_batch: false,
                warmed_s: Some(30.0),
                uptime_s: Some(600.0),
            },
            product: "rustpipe".into(),
            line: "rustpipe-eos".into(),
            version: "0.1.0".into(),
            workload: "stateless".into(),
            variant: None,
            delivery: Delivery::ExactlyOnce,
            config: RunConfig {
                rate: 1,
                warmup_s: 1,
                warmup_cap_s: None,
                window_s: 1,
                seed: 1,
                commit_interval_ms: 10,
                commit_intervals: None,
                client: crate::config::ClientProfile::default(),
                settings: Vec::new(),
                profile: crate::config::Profile::Uniform,
                product_settings: Default::default(),
                parallelism: 1,
                sample_interval_ms: 1000,
                input_partitions: 1,
                drain_records: None,
                etl: None,
            },
            status: Status::Ok,
            failure: None,
            regime: None,
            flags: Vec::new(),
            not_applicable: BTreeMap::new(),
            resources: None,
            series: None,
            metrics: BTreeMap::from([(
                "latency_p50_ms".to_string(),
                Metric::new(1.5, "ms", Better::Lower),
            )]),
            gendata: None,
            sanity: None,
            verification: None,
            chaos: None,
            latency_histogram: None,
            latency_series: None,
            logs: PathBuf::from("/tmp"),
            suite_commit: Some("0faffc1".into()),
        }
    }

    #[test]
    fn an_older_sanity_block_reads_with_its_figures_moved() {
        let stored = r#"{"selectivity":0.29,"expected_selectivity":0.29,"tolerance":0.25,
            "selectivity_ok":true,"breach_rate":0.2,"enrichment_checked":900,
            "enrichment_mismatched":1,"verdict":"ok","message":"m"}"#;
        let sanity: Sanity = serde_json::from_str(stored).unwrap();
        assert_eq!(sanity.figures["breach_rate"], 0.2);
        assert_eq!(
            (sanity.content_checked, sanity.content_mismatched),
            (900, 1)
        );
        let written = serde_json::to_value(&sanity).unwrap();
        assert_eq!(written["figures"]["breach_rate"], 0.2);
        assert!(written.get("breach_rate").is_none());
        let again: Sanity = serde_json::from_value(written).unwrap();
        assert_eq!(again, sanity);
    }

    #[test]
    fn a_one_kill_chaos_block_reads_as_a_campaign_of_one() {
        let stored = r#"{"kill_at_s":15,"restart":true,"killed_processes":2,"recovery_ms":812.5}"#;
        let chaos: Chaos = serde_json::from_str(stored).unwrap();
        assert_eq!(
            chaos.kills,
            [Kill {
                at_s: 15.0,
                killed_processes: 2,
                recovery_ms: Some(812.5)
            }]
        );
        assert_eq!(chaos.kills_survived, 1);
        assert_eq!(chaos.recovery_max_ms, Some(812.5));
        let again: Chaos = serde_json::from_value(serde_json::to_value(&chaos).unwrap()).unwrap();
        assert_eq!(again, chaos);
    }

    #[test]
    fn a_campaign_counts_its_recoveries_and_their_median_and_max() {
        let kill = |at_s: f64, recovery_ms: Option<f64>| Kill {
            at_s,
            killed_processes: 1,
            recovery_ms,
        };
        let chaos = Chaos::new(
            true,
            vec![
                kill(10.0, Some(300.0)),
                kill(20.0, None),
                kill(30.0, Some(100.0)),
                kill(40.0, Some(900.0)),
                kill(50.0, Some(200.0)),
            ],
            None,
        );
        assert_eq!(chaos.kills_survived, 4);
        assert_eq!(chaos.recovery_p50_ms, Some(250.0));
        assert_eq!(chaos.recovery_max_ms, Some(900.0));
        let none = Chaos::new(true, vec![kill(10.0, None)], None);
        assert_eq!((none.kills_survived, none.recovery_p50_ms), (0, None));
    }

    #[test]
    fn records_append_as_lines_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        append_record(dir.path(), &record("a")).unwrap();
        let path = append_record(dir.path(), &record("b")).unwrap();
        assert_eq!(path, dir.path().join("stateless.jsonl"));
        let back = read_records(&path).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back[1].run_id, "b");
        assert_eq!(
            back[0].metrics["latency_p50_ms"],
            Metric::new(1.5, "ms", Better::Lower)
        );
        let line: serde_json::Value = serde_json::from_str(
            std::fs::read_to_string(&path)
                .unwrap()
                .lines()
                .next()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(line["delivery"], "exactly-once");
        assert_eq!(line["status"], "ok");
        assert_eq!(line["metrics"]["latency_p50_ms"]["better"], "lower");
        assert!(line.get("failure").is_none());
        assert!(line.get("round").is_none(), "no round, no key");
        assert!(line.get("position").is_none(), "no position, no key");
    }

    #[test]
    fn a_round_is_written_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = record("a");
        r.round = Some(2);
        r.position = Some(1);
        let path = append_record(dir.path(), &r).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"round\":2,\"position\":1"), "{text}");
        let read = &read_records(&path).unwrap()[0];
        assert_eq!((read.round, read.position), (Some(2), Some(1)));
    }

    #[test]
    fn a_broken_line_names_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = append_record(dir.path(), &record("a")).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"half\":\n")
            .unwrap();
        let err = format!("{:#}", read_records(&path).unwrap_err());
        assert!(err.contains("stateless.jsonl:2: not a run record"), "{err}");
    }

    #[test]
    fn a_broken_line_is_set_aside_and_the_others_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = append_record(dir.path(), &record("a")).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"half\":\n")
            .unwrap();
        append_record(dir.path(), &record("b")).unwrap();
        let file = read_results_file(&path).unwrap();
        let ids: Vec<&str> = file.records.iter().map(|r| r.run_id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(file.skipped.len(), 1);
        assert_eq!(file.skipped[0].line, 2);
        let warning = file.skipped[0].to_string();
        assert!(
            warning.starts_with(&format!("{}:2: not a run record: ", path.display())),
            "{warning}"
        );
        // Strict reading still fails on it, naming file and line.
        let err = format!("{:#}", read_records(&path).unwrap_err());
        assert!(err.contains("stateless.jsonl:2: not a run record"), "{err}");
    }

    #[test]
    fn a_record_appended_after_a_cut_line_starts_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let path = append_record(dir.path(), &record("a")).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"cut")
            .unwrap();
        append_record(dir.path(), &record("b")).unwrap();
        let file = read_results_file(&path).unwrap();
        assert_eq!(file.records.len(), 2);
        assert_eq!(file.records[1].run_id, "b");
        assert_eq!(file.skipped.len(), 1);
        assert_eq!(file.skipped[0].line, 2);
    }

    #[test]
    fn a_folder_is_writable_or_says_why_not() {
        let dir = tempfile::tempdir().unwrap();
        let results = dir.path().join("new/results");
        ensure_writable(&results).unwrap();
        assert!(results.is_dir());
        assert_eq!(std::fs::read_dir(&results).unwrap().count(), 0);
        let file = dir.path().join("a-file");
        std::fs::write(&file, "").unwrap();
        assert!(ensure_writable(&file.join("results")).is_err());
    }
}
