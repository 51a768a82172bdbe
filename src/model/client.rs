//! The client profile: the Kafka client settings that mean the same in every
//! client, handed to every product so that no engine is measured with
//! different fetch or produce settings than another.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// bench.yaml's `client:` section. Each product applies every key through
/// its own client's names, or says in its product.yaml why it cannot.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientProfile {
    /// Bytes a fetch waits for before the broker answers (fetch.min.bytes).
    pub fetch_min_bytes: u64,
    /// The longest the broker holds a fetch for fetch_min_bytes (fetch.max.wait.ms).
    pub fetch_max_wait_ms: u64,
    /// The most bytes one fetch returns per partition (max.partition.fetch.bytes).
    pub max_partition_fetch_bytes: u64,
    /// How long a producer waits to fill a batch (linger.ms).
    pub linger_ms: u64,
    /// Which replicas acknowledge a write (acks).
    pub acks: Acks,
    /// Idempotent producer (enable.idempotence).
    pub enable_idempotence: bool,
    /// Producer compression (compression.type).
    pub compression: Compression,
    /// How long a librdkafka consumer postpones its next fetch once its
    /// prefetch queue is over its limits (fetch.queue.backoff.ms), which
    /// only a backlog fills; clients without such a queue excuse it.
    /// Absent in records from before the rule, when each engine kept its
    /// own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetch_queue_backoff_ms: Option<u64>,
    /// A consumer group member's session (session.timeout.ms). A product
    /// whose consumer joins a group does so as a static member
    /// (group.instance.id), so a restart after a kill takes its partitions
    /// back at once: recovery on the same terms for every engine. Absent in
    /// records from before the rule, when each engine kept its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_timeout_ms: Option<u64>,
    /// An exactly-once line's transactional producer retries after this
    /// long (retry.backoff.ms and retry.backoff.max.ms): one rule for every
    /// exactly-once line (docs/fairness.md). Absent in records from before
    /// the rule, when each engine kept its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_retry_backoff_ms: Option<u64>,
    /// How long an exactly-once line's transaction may stay open before
    /// the broker aborts it (transaction.timeout.ms): after a kill, a line
    /// whose restarted process takes a new transactional id holds
    /// read_committed readers this long. One value for every exactly-once
    /// line; an engine whose two-phase commit needs longer says so in its
    /// client_exceptions. Absent in records from before the rule, when each
    /// engine kept its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_timeout_ms: Option<u64>,
}

/// The keys of [`ClientProfile`], in its order.
pub const CLIENT_KEYS: [&str; 11] = [
    "fetch_min_bytes",
    "fetch_max_wait_ms",
    "max_partition_fetch_bytes",
    "linger_ms",
    "acks",
    "enable_idempotence",
    "compression",
    "fetch_queue_backoff_ms",
    "session_timeout_ms",
    "transaction_retry_backoff_ms",
    "transaction_timeout_ms",
];

/// The keys only exactly-once lines apply and report.
pub const TRANSACTION_KEYS: [&str; 2] = ["transaction_retry_backoff_ms", "transaction_timeout_ms"];

/// acks: `all`, `1` or `0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Acks {
    #[serde(rename = "all")]
    All,
    #[serde(rename = "1")]
    Leader,
    #[serde(rename = "0")]
    None,
}

impl Acks {
    pub fn as_str(self) -> &'static str {
        match self {
            Acks::All => "all",
            Acks::Leader => "1",
            Acks::None => "0",
        }
    }
}

/// compression.type as every client spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    None,
    Gzip,
    Snappy,
    Lz4,
    Zstd,
}

impl Compression {
    pub fn as_str(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Snappy => "snappy",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        }
    }
}

impl Default for ClientProfile {
    /// The profile chosen on the reference host (docs/fairness.md).
    fn default() -> Self {
        ClientProfile {
            fetch_min_bytes: 1,
            fetch_max_wait_ms: 10,
            max_partition_fetch_bytes: 52_428_800,
            linger_ms: 1,
            acks: Acks::All,
            enable_idempotence: true,
            compression: Compression::Lz4,
            fetch_queue_backoff_ms: Some(1),
            session_timeout_ms: Some(10_000),
            transaction_retry_backoff_ms: Some(2),
            transaction_timeout_ms: Some(10_000),
        }
    }
}

impl ClientProfile {
    /// What every product was configured with before the profile existed
    /// (bench versions 1 and 2), for reading their records.
    pub fn before_profiles() -> ClientProfile {
        ClientProfile {
            fetch_min_bytes: 65_536,
            linger_ms: 5,
            fetch_queue_backoff_ms: None,
            session_timeout_ms: None,
            transaction_retry_backoff_ms: None,
            transaction_timeout_ms: None,
            ..ClientProfile::default()
        }
    }

    /// The BENCH_* variables a product reads the profile from; a key a
    /// record from before its rule lacks is left out.
    pub fn environment(&self) -> Vec<(&'static str, String)> {
        let optional = |key: &'static str, value: Option<u64>| value.map(|v| (key, v.to_string()));
        let mut environment = vec![
            ("BENCH_FETCH_MIN_BYTES", self.fetch_min_bytes.to_string()),
            (
                "BENCH_FETCH_MAX_WAIT_MS",
                self.fetch_max_wait_ms.to_string(),
            ),
            (
                "BENCH_MAX_PARTITION_FETCH_BYTES",
                self.max_partition_fetch_bytes.to_string(),
            ),
            ("BENCH_LINGER_MS", self.linger_ms.to_string()),
            ("BENCH_ACKS", self.acks.as_str().to_string()),
            (
                "BENCH_ENABLE_IDEMPOTENCE",
                self.enable_idempotence.to_string(),
            ),
            ("BENCH_COMPRESSION", self.compression.as_str().to_string()),
        ];
        environment.extend(optional(
            "BENCH_FETCH_QUEUE_BACKOFF_MS",
            self.fetch_queue_backoff_ms,
        ));
        environment.extend(optional(
            "BENCH_SESSION_TIMEOUT_MS",
            self.session_timeout_ms,
        ));
        environment.extend(optional(
            "BENCH_TRANSACTION_RETRY_BACKOFF_MS",
            self.transaction_retry_backoff_ms,
        ));
        environment.extend(optional(
            "BENCH_TRANSACTION_TIMEOUT_MS",
            self.transaction_timeout_ms,
        ));
        environment
    }

    /// Each key with its value in words, in [`CLIENT_KEYS`] order; a key
    /// the record predates reads "engine's own".
    pub fn entries(&self) -> Vec<(&'static str, String)> {
        let mut values: BTreeMap<String, String> = self
            .environment()
            .into_iter()
            .map(|(var, value)| (var.trim_start_matches("BENCH_").to_lowercase(), value))
            .collect();
        CLIENT_KEYS
            .iter()
            .map(|key| {
                let value = values
                    .remove(*key)
                    .unwrap_or_else(|| "engine's own".to_string());
                (*key, value)
            })
            .collect()
    }

    /// The keys a line of `delivery` applies: the transaction's retry
    /// backoff and timeout only on exactly-once lines.
    pub fn applies_to(key: &str, delivery: super::settings::Delivery) -> bool {
        !TRANSACTION_KEYS.contains(&key) || delivery == super::settings::Delivery::ExactlyOnce
    }

    /// The profile as a product reports it applied: a JSON object keyed by
    /// [`CLIENT_KEYS`], with numbers and booleans typed.
    pub fn to_json_map(&self) -> BTreeMap<String, serde_json::Value> {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(map)) => map.into_iter().collect(),
            _ => BTreeMap::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_the_struct_and_the_environment() {
        let profile = ClientProfile::default();
        let json = profile.to_json_map();
        assert_eq!(json.keys().map(String::as_str).collect::<Vec<_>>(), {
            let mut keys = CLIENT_KEYS.to_vec();
            keys.sort();
            keys
        });
        for ((key, value), (var, env_value)) in profile.entries().iter().zip(profile.environment())
        {
            assert_eq!(var, format!("BENCH_{}", key.to_uppercase()));
            assert_eq!(*value, env_value);
        }
        assert_eq!(json["acks"], serde_json::json!("all"));
        assert_eq!(json["enable_idempotence"], serde_json::json!(true));
        assert_eq!(json["fetch_min_bytes"], serde_json::json!(1));
    }

    #[test]
    fn acks_and_compression_take_only_their_spellings() {
        let parse = |text: &str| yaml_serde::from_str::<Acks>(text);
        assert_eq!(parse("all").unwrap(), Acks::All);
        assert_eq!(parse("'1'").unwrap(), Acks::Leader);
        assert!(parse("2").is_err());
        assert!(yaml_serde::from_str::<Compression>("brotli").is_err());
        assert_eq!(
            yaml_serde::from_str::<Compression>("zstd").unwrap(),
            Compression::Zstd
        );
    }
}
