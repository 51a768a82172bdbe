//! `bench.yaml`: the bench version, the broker, the ClickHouse sink, run
//! defaults and tolerances.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::isolation::IsolationSetting;
use crate::model::ssh::SshAddress;

mod broker;
mod run_defaults;
mod sink;
mod sweep;
mod tolerances;

pub use broker::BrokerConfig;
pub use run_defaults::{RunDefaults, MIN_WINDOW_SAMPLES};
pub use sink::SinkConfig;
pub use sweep::SweepConfig;
pub use tolerances::Tolerances;

use super::{key_line, parse_yaml, read_text, ClientProfile, ConfigError, EtlConfig};

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

impl Bench {
    /// The rate a run offers unless told: `run.rate`, or the iso rate.
    pub fn default_rate(&self) -> u64 {
        self.run.rate.unwrap_or(self.iso_rate)
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
        if self.client.fetch_queue_backoff_ms.is_none()
            || self.client.session_timeout_ms.is_none()
            || self.client.transaction_retry_backoff_ms.is_none()
            || self.client.transaction_timeout_ms.is_none()
        {
            return Err((
                None,
                "client.fetch_queue_backoff_ms, client.session_timeout_ms, \
                 client.transaction_retry_backoff_ms and client.transaction_timeout_ms must be \
                 set: every line is handed them"
                    .into(),
            ));
        }
        if self.client.transaction_timeout_ms == Some(0) {
            return Err((
                None,
                "client.transaction_timeout_ms must be at least 1: a transaction needs time to commit"
                    .into(),
            ));
        }
        if let BrokerConfig::External { bootstrap, .. } = &self.broker {
            if bootstrap.trim().is_empty() {
                return Err((None, "broker.bootstrap must name host:port".into()));
            }
        }
        self.broker.check_shape()?;
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
}

#[cfg(test)]
mod tests;
