//! `bench.yaml`: the bench version, the broker, the ClickHouse sink, run
//! defaults and tolerances.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::isolation::IsolationSetting;
use crate::model::broker::{BrokerShape, Replicas};
use crate::model::ssh::SshAddress;

mod sweep;

pub use sweep::SweepConfig;

use super::{
    key_line, parse_yaml, read_text, ClientProfile, CommitIntervals, ConfigError, EtlConfig,
};

/// The fewest samples a measurement window may span: the regime is a slope
/// over the window's samples, and fewer cannot carry one.
pub const MIN_WINDOW_SAMPLES: u64 = 5;

/// The whole of `bench.yaml`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bench {
    /// Bumped whenever a change makes new results incomparable with old ones.
    pub bench_version: u32,
    /// Where installs, the broker and run logs live; `~` is expanded.
    /// `STREAMSUITE_CACHE` in the environment wins over it.
    #[serde(default)]
    pub cache_dir: Option<String>,
    #[serde(default)]
    pub broker: BrokerConfig,
    /// The ClickHouse the ETL workloads write to.
    #[serde(default)]
    pub sink: SinkConfig,
    /// How the avro-etl workload's pipeline decodes and inserts.
    #[serde(default)]
    pub etl: EtlConfig,
    pub run: RunDefaults,
    /// The Kafka client settings every product applies.
    #[serde(default)]
    pub client: ClientProfile,
    /// A rate (records/s) every runnable line keeps up with on the host: the
    /// report's latency tables compare the lines at this rate.
    #[serde(default = "default_iso_rate")]
    pub iso_rate: u64,
    pub tolerances: Tolerances,
    /// Where results JSONL files go, relative to bench.yaml's folder.
    #[serde(default = "default_results_dir")]
    pub results_dir: PathBuf,
    /// What a rate sweep holds a line to (`suite sweep`).
    #[serde(default)]
    pub sweep: SweepConfig,
    /// Products placed on other hosts, reached over SSH: each product's
    /// processes in turn on its hosts. gendata and the probe stay here.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub hosts: BTreeMap<String, Vec<SshAddress>>,
    /// How the suite reaches those hosts.
    #[serde(default)]
    pub ssh: SshSettings,
    /// Which CPUs each role gets: `none` (the scheduler's choice), `auto`
    /// (a layout by core count) or the CPU lists of product, broker,
    /// gendata and probe. Part of the bench point.
    #[serde(default)]
    pub isolation: IsolationSetting,
}

/// How ssh is called for the hosts of `hosts:`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SshSettings {
    /// An ssh_config(5) file passed to every ssh call (`-F`): keys, known
    /// hosts, jump hosts. ssh's own default (~/.ssh/config) when absent.
    #[serde(default)]
    pub config: Option<PathBuf>,
}

fn default_iso_rate() -> u64 {
    10_000
}

fn default_results_dir() -> PathBuf {
    PathBuf::from("reports/results")
}

/// Which broker the runs use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum BrokerConfig {
    /// Apache Kafka in KRaft mode started by the suite on 127.0.0.1: one
    /// node, or a small cluster of nodes that are each broker and controller.
    Local {
        /// Apache Kafka version, resolved from Maven Central.
        #[serde(default = "default_kafka_version")]
        version: String,
        /// The first node's client port; its controller listens on the next
        /// one, and node i (from 0) on `port + 2i` and `port + 2i + 1`.
        #[serde(default = "default_port")]
        port: u16,
        /// Heap of each node.
        #[serde(default = "default_heap_mb")]
        heap_mb: u32,
        /// Seconds of load a broker the suite has just started gets before
        /// any run uses it: it compiles its hot paths in its first minute.
        #[serde(default = "default_broker_warmup_s")]
        warmup_s: u64,
        /// Nodes of the cluster, each broker and controller.
        #[serde(default = "one")]
        nodes: u32,
        /// Replicas of every topic a run makes.
        #[serde(default = "one")]
        replication: u32,
        /// The run topics' min.insync.replicas: with acks=all, a write is
        /// acknowledged once this many replicas have it.
        #[serde(default = "one")]
        min_insync_replicas: u32,
    },
    /// Any Kafka-compatible cluster reached at `bootstrap`.
    External {
        bootstrap: String,
        /// What the cluster runs (e.g. "redpanda 25.1"): recorded with each result.
        #[serde(default)]
        version: Option<String>,
        /// Replicas of every topic a run makes.
        #[serde(default = "one")]
        replication: u32,
        /// The run topics' min.insync.replicas.
        #[serde(default = "one")]
        min_insync_replicas: u32,
    },
}

fn one() -> u32 {
    1
}

fn default_kafka_version() -> String {
    "4.4.0".to_string()
}
fn default_port() -> u16 {
    19092
}
fn default_heap_mb() -> u32 {
    1024
}
fn default_broker_warmup_s() -> u64 {
    30
}

impl Bench {
    /// The rate a run offers unless told: `run.rate`, or the iso rate.
    pub fn default_rate(&self) -> u64 {
        self.run.rate.unwrap_or(self.iso_rate)
    }
}

impl BrokerConfig {
    /// What the broker runs, as each result records it and as a bench point
    /// compares it: `apache-kafka 4.4.0` for the local one, the configured
    /// version of an external one.
    pub fn recorded_version(&self) -> Option<String> {
        match self {
            BrokerConfig::Local { version, .. } => Some(format!("apache-kafka {version}")),
            BrokerConfig::External { version, .. } => version.clone(),
        }
    }

    /// How the run topics are replicated.
    pub fn replicas(&self) -> Replicas {
        let (BrokerConfig::Local {
            replication,
            min_insync_replicas,
            ..
        }
        | BrokerConfig::External {
            replication,
            min_insync_replicas,
            ..
        }) = self;
        Replicas {
            replication: *replication,
            min_insync_replicas: *min_insync_replicas,
        }
    }

    /// The local cluster's nodes; None for an external cluster.
    pub fn local_nodes(&self) -> Option<u32> {
        match self {
            BrokerConfig::Local { nodes, .. } => Some(*nodes),
            BrokerConfig::External { .. } => None,
        }
    }

    /// Whether runs on a cluster of `shape` were run on this broker's shape:
    /// the same replicas, and for the local broker the same nodes (an
    /// external cluster's brokers are counted at run time).
    pub fn has_shape(&self, shape: &BrokerShape) -> bool {
        self.local_nodes().is_none_or(|nodes| nodes == shape.nodes)
            && self.replicas() == shape.replicas
    }

    /// Seconds of warm-up load for a broker the suite starts; 0 for an
    /// external one, which the suite neither starts nor warms.
    pub fn warmup_s(&self) -> u64 {
        match self {
            BrokerConfig::Local { warmup_s, .. } => *warmup_s,
            BrokerConfig::External { .. } => 0,
        }
    }
}

impl Default for BrokerConfig {
    fn default() -> Self {
        BrokerConfig::Local {
            version: default_kafka_version(),
            port: default_port(),
            heap_mb: default_heap_mb(),
            warmup_s: default_broker_warmup_s(),
            nodes: 1,
            replication: 1,
            min_insync_replicas: 1,
        }
    }
}

/// Which ClickHouse the ETL workloads write to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum SinkConfig {
    /// Debian's clickhouse-server, started by the suite on 127.0.0.1 with its
    /// data in the cache directory.
    Local {
        /// The HTTP port, which the suite and the products write through.
        #[serde(default = "default_sink_http_port")]
        http_port: u16,
        /// The native protocol's port, for `clickhouse-client --port`.
        #[serde(default = "default_sink_tcp_port")]
        tcp_port: u16,
    },
    /// Any ClickHouse reached over HTTP at `url`.
    External {
        /// `http://host:8123`; https is not supported.
        url: String,
        #[serde(default)]
        user: Option<String>,
        #[serde(default)]
        password: Option<String>,
    },
}

fn default_sink_http_port() -> u16 {
    18123
}
fn default_sink_tcp_port() -> u16 {
    19000
}

impl Default for SinkConfig {
    fn default() -> Self {
        SinkConfig::Local {
            http_port: default_sink_http_port(),
            tcp_port: default_sink_tcp_port(),
        }
    }
}

impl SinkConfig {
    /// The server's HTTP address.
    pub fn url(&self) -> String {
        match self {
            SinkConfig::Local { http_port, .. } => format!("http://127.0.0.1:{http_port}"),
            SinkConfig::External { url, .. } => url.clone(),
        }
    }
}

/// Defaults for one run; the command line overrides each.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunDefaults {
    /// Seconds of load before measuring.
    pub warmup_s: u64,
    /// Seconds measured.
    pub window_s: u64,
    /// Records per second offered by gendata (0 = as fast as it can); when
    /// absent, the iso rate: a new user's first run is at the point every
    /// line keeps up with, so it quotes a latency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<u64>,
    /// gendata's seed: the same seed gives the same records.
    pub seed: u64,
    /// How often the orchestrator polls offsets and samples processes.
    pub sample_interval_ms: u64,
    /// How often each delivery mode commits, handed to a line as
    /// BENCH_COMMIT_INTERVAL_MS.
    pub commit_interval_ms: CommitIntervals,
    /// Handed to every product as BENCH_PARALLELISM.
    pub parallelism: u32,
    /// The form each product runs in: `embedded` (its `start` command) or
    /// a deployment its product.yaml offers (`cluster`).
    #[serde(default = "default_deploy")]
    pub deploy: String,
    /// How long a product may take to become ready.
    pub ready_timeout_s: u64,
    /// How long a product may take to stop after SIGTERM before SIGKILL.
    pub stop_grace_s: u64,
    /// After the window, how long the product may take to commit the rest
    /// of its input before it is stopped and verified.
    #[serde(default = "default_settle_s")]
    pub settle_s: u64,
    /// The longest warm-up: a paced run's warm-up lasts from `warmup_s`
    /// until the product is steady, and a run that reaches this first is
    /// measured and flagged `not-steady`.
    #[serde(default = "default_warmup_cap_s")]
    pub warmup_cap_s: u64,
}

fn default_deploy() -> String {
    super::EMBEDDED.to_string()
}

fn default_warmup_cap_s() -> u64 {
    120
}

fn default_settle_s() -> u64 {
    30
}

impl RunDefaults {
    /// The shortest window, in whole seconds, that spans
    /// [`MIN_WINDOW_SAMPLES`] samples at `sample_interval_ms`.
    pub fn min_window_s(&self) -> u64 {
        MIN_WINDOW_SAMPLES
            .saturating_mul(self.sample_interval_ms)
            .div_ceil(1000)
            .max(1)
    }

    /// `Err` with the shortest allowed window when `window_s` spans fewer
    /// than [`MIN_WINDOW_SAMPLES`] samples.
    pub fn check_window(&self, window_s: u64) -> Result<(), u64> {
        let min = self.min_window_s();
        if window_s < min {
            Err(min)
        } else {
            Ok(())
        }
    }
}

/// Thresholds for flags and verdicts; each is a finite number, zero or more.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tolerances {
    /// |lag drift| within this is keep-up.
    #[serde(deserialize_with = "non_negative")]
    pub lag_drift: f64,
    /// Selectivity further than this share from the expected value is a warning.
    #[serde(deserialize_with = "non_negative")]
    pub selectivity: f64,
    /// gendata late at delivery by more than this (p99, ms) flags the run;
    /// its max beyond this withholds the latency tail.
    #[serde(deserialize_with = "non_negative")]
    pub generator_behind_ms: f64,
    /// The host busier than this (average over the window, % of all cores)
    /// flags the run `host-saturated`: the product may have been starved.
    #[serde(deserialize_with = "non_negative")]
    pub host_busy_pct: f64,
    /// A paired round whose ratio B / A lies within 1 ± this share is a tie:
    /// neither better nor worse, and left out of the sign test.
    #[serde(default = "default_tie_band", deserialize_with = "non_negative")]
    pub tie_band: f64,
    /// offered/s (gendata's count) and the input's growth (its high
    /// watermark's slope) further apart than this share flag the run
    /// `inconsistent-flow`.
    #[serde(
        default = "default_offered_vs_input",
        deserialize_with = "non_negative"
    )]
    pub offered_vs_input: f64,
    /// output/s further than this share from consumed/s x the expected
    /// selectivity flags the run `inconsistent-flow`.
    #[serde(
        default = "default_output_vs_consumed",
        deserialize_with = "non_negative"
    )]
    pub output_vs_consumed: f64,
    /// A warm-up may end once consumed/s has kept within this share of
    /// offered/s over the steady look-back ...
    #[serde(default = "default_steady_rate", deserialize_with = "non_negative")]
    pub steady_rate: f64,
    /// ... and CPU per record within this share between its first and last
    /// thirds.
    #[serde(default = "default_steady_cpu", deserialize_with = "non_negative")]
    pub steady_cpu: f64,
    /// CPU per record in the window's first and last thirds further apart
    /// than this share flags a keep-up run `not-steady`.
    #[serde(
        default = "default_window_thirds_cpu",
        deserialize_with = "non_negative"
    )]
    pub window_thirds_cpu: f64,
    /// Steal time above this (window average, % of all cores) flags the
    /// run `noisy-host`: the hypervisor took CPU from every role.
    #[serde(default = "default_steal_pct", deserialize_with = "non_negative")]
    pub steal_pct: f64,
    /// Processes that are none of the run's using more than this (window
    /// average, % of one core) flag the run `noisy-host`.
    #[serde(default = "default_outside_pct", deserialize_with = "non_negative")]
    pub outside_pct: f64,
    /// The product's CPU from its cgroup and from the /proc samples further
    /// apart than this share of the cgroup's flags `cpu-mismatch`.
    #[serde(default = "default_cpu_mismatch", deserialize_with = "non_negative")]
    pub cpu_mismatch: f64,
}

fn default_steal_pct() -> f64 {
    2.0
}

fn default_outside_pct() -> f64 {
    10.0
}

fn default_cpu_mismatch() -> f64 {
    0.05
}

fn default_steady_rate() -> f64 {
    0.05
}

fn default_steady_cpu() -> f64 {
    0.15
}

fn default_window_thirds_cpu() -> f64 {
    0.25
}

fn default_offered_vs_input() -> f64 {
    0.02
}

fn default_output_vs_consumed() -> f64 {
    0.25
}

/// The tie band of a bench.yaml that names none.
fn default_tie_band() -> f64 {
    0.01
}

/// A tolerance: checked while parsing, so the error names its line.
fn non_negative<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    let value = f64::deserialize(deserializer)?;
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(serde::de::Error::custom(format!(
            "a tolerance must be a finite number, zero or more; got {value}"
        )))
    }
}

impl Bench {
    /// Reads and checks `bench.yaml`.
    pub fn from_file(path: &Path) -> Result<Bench, ConfigError> {
        let text = read_text(path)?;
        let bench: Bench = parse_yaml(path, &text)?;
        bench
            .check()
            .map(|()| bench.clone())
            .map_err(
                |(key, message)| match key.and_then(|key| key_line(&text, key)) {
                    Some(line) => ConfigError::Value {
                        path: path.to_path_buf(),
                        line,
                        message,
                    },
                    None => ConfigError::Invalid {
                        path: path.to_path_buf(),
                        message,
                    },
                },
            )
    }

    /// The checks beyond types, with the key at fault where one is.
    pub(super) fn check(&self) -> Result<(), (Option<&'static str>, String)> {
        if self.etl.events == 0 || self.etl.block_rows == 0 || self.etl.max_in_flight == 0 {
            return Err((
                None,
                "etl.events, etl.block_rows and etl.max_in_flight must be at least 1".into(),
            ));
        }
        if let Err(message) = self.sweep.check() {
            return Err((Some("p99_bound_ms"), message));
        }
        if self.run.sample_interval_ms == 0 {
            return Err((None, "run.sample_interval_ms must be at least 1".into()));
        }
        if let Err(min) = self.run.check_window(self.run.window_s) {
            return Err((
                Some("window_s"),
                format!(
                    "run.window_s {} is too short: a window must span at least \
                     {MIN_WINDOW_SAMPLES} samples, {min} s at run.sample_interval_ms {}; \
                     set it to {min} or more",
                    self.run.window_s, self.run.sample_interval_ms
                ),
            ));
        }
        if self.client.fetch_min_bytes == 0 || self.client.max_partition_fetch_bytes == 0 {
            return Err((
                None,
                "client.fetch_min_bytes and client.max_partition_fetch_bytes must be at least 1"
                    .into(),
            ));
        }
        if self.client.session_timeout_ms.is_none()
            || self.client.transaction_retry_backoff_ms.is_none()
        {
            return Err((
                None,
                "client.session_timeout_ms and client.transaction_retry_backoff_ms must be set: \
                 every line is handed them"
                    .into(),
            ));
        }
        if let BrokerConfig::External { bootstrap, .. } = &self.broker {
            if bootstrap.trim().is_empty() {
                return Err((None, "broker.bootstrap must name host:port".into()));
            }
        }
        self.check_broker_shape()?;
        self.check_hosts()?;
        match &self.sink {
            SinkConfig::Local {
                http_port,
                tcp_port,
            } if http_port == tcp_port => {
                return Err((
                    Some("tcp_port"),
                    format!("sink.http_port and sink.tcp_port are both {http_port}; give each its own port"),
                ));
            }
            SinkConfig::External { url, .. } if !url.starts_with("http://") => {
                return Err((
                    Some("url"),
                    format!("sink.url `{url}` is not an http:// address such as http://host:8123 (https is not supported)"),
                ));
            }
            _ => {}
        }
        Ok(())
    }
}

impl Bench {
    /// Hosts a product can be placed on: at least one per product, and a
    /// broker each can reach (the local one listens on 127.0.0.1 alone).
    fn check_hosts(&self) -> Result<(), (Option<&'static str>, String)> {
        for (product, hosts) in &self.hosts {
            if hosts.is_empty() {
                return Err((
                    Some("hosts"),
                    format!("hosts.{product} names no host; give ssh://user@host, or remove it"),
                ));
            }
            let remote = hosts.iter().find(|h| !h.is_loopback());
            if let (Some(host), BrokerConfig::Local { .. }) = (remote, &self.broker) {
                return Err((
                    Some("hosts"),
                    format!(
                        "hosts.{product} places it on {host}, which cannot reach the local \
                         broker on 127.0.0.1: use an external broker (broker.kind: external) \
                         that host reaches"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A cluster the suite can start, and replicas it can place.
    fn check_broker_shape(&self) -> Result<(), (Option<&'static str>, String)> {
        let Replicas {
            replication,
            min_insync_replicas,
        } = self.broker.replicas();
        if let BrokerConfig::Local { nodes, port, .. } = &self.broker {
            if !(1..=MAX_LOCAL_NODES).contains(nodes) {
                return Err((
                    Some("nodes"),
                    format!(
                        "broker.nodes {nodes}: the local cluster has 1 to {MAX_LOCAL_NODES} nodes"
                    ),
                ));
            }
            if u32::from(*port) + 2 * nodes > u32::from(u16::MAX) {
                return Err((
                    Some("port"),
                    format!("broker.port {port} leaves no room for {nodes} nodes' ports"),
                ));
            }
            if replication > *nodes {
                return Err((
                    Some("replication"),
                    format!(
                        "broker.replication {replication} needs as many nodes; the local \
                         cluster has {nodes} (set broker.nodes)"
                    ),
                ));
            }
        }
        if replication == 0 || min_insync_replicas == 0 || min_insync_replicas > replication {
            return Err((
                Some("min_insync_replicas"),
                format!(
                    "broker.min_insync_replicas {min_insync_replicas} must be from 1 to \
                     broker.replication ({replication})"
                ),
            ));
        }
        Ok(())
    }
}

/// The most nodes a local cluster may have: each is a JVM on this host.
const MAX_LOCAL_NODES: u32 = 5;

#[cfg(test)]
mod tests;
