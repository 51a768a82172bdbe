//! rustpipe's settings, read from the BENCH_* variables every product gets.

use anyhow::{anyhow, bail, Context, Result};
use rdkafka::config::ClientConfig;

/// How rustpipe delivers, from BENCH_DELIVERY.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Produce as records arrive; store the offsets of wholly acknowledged
    /// chunks for the next auto-commit.
    AtLeastOnce,
    /// One Kafka transaction per commit interval, carrying its outputs and
    /// input offsets.
    ExactlyOnce,
}

impl Delivery {
    /// Parses BENCH_DELIVERY's spelling.
    fn parse(text: &str) -> Option<Delivery> {
        match text {
            "at-least-once" => Some(Delivery::AtLeastOnce),
            "exactly-once" => Some(Delivery::ExactlyOnce),
            _ => None,
        }
    }
}

/// The job rustpipe runs, from BENCH_WORKLOAD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// Filter `eu-*` and derive two fields, record by record.
    Stateless,
    /// Forward every record's value as it was read.
    Passthrough,
    /// Tumbling 1 s event-time windows per (region, service).
    WindowedLowcard,
    /// Avro batches from Kafka into ClickHouse.
    AvroEtl,
}

impl Workload {
    /// Parses BENCH_WORKLOAD's spelling; a workload rustpipe does not do is
    /// an error, never the stateless job in its place.
    pub fn parse(text: &str) -> Result<Workload> {
        match text {
            "stateless" => Ok(Workload::Stateless),
            "passthrough" => Ok(Workload::Passthrough),
            "windowed-lowcard" => Ok(Workload::WindowedLowcard),
            "avro-etl" => Ok(Workload::AvroEtl),
            _ => bail!("rustpipe: workload `{text}` is not implemented"),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Workload::Stateless => "stateless",
            Workload::Passthrough => "passthrough",
            Workload::WindowedLowcard => "windowed-lowcard",
            Workload::AvroEtl => "avro-etl",
        }
    }
}

/// Everything rustpipe needs to know about its run.
#[derive(Debug, Clone)]
pub struct PipelineSettings {
    pub bootstrap: String,
    pub input_topic: String,
    pub output_topic: String,
    pub group_id: String,
    pub workload: Workload,
    pub delivery: Delivery,
    pub commit_interval_ms: u64,
    pub transactional_id: String,
    /// Workers the stage runs on (BENCH_PARALLELISM); 1 runs it on the
    /// reader's own thread.
    pub parallelism: usize,
    /// The suite's client profile, applied to both clients.
    pub client: ClientProfile,
    /// Options from the product's `settings` (BENCH_SETTINGS).
    pub options: PipelineOptions,
}

/// The suite's client profile (BENCH_FETCH_MIN_BYTES and the rest), kept as
/// the strings librdkafka takes: its names mean what the profile's do.
#[derive(Debug, Clone)]
pub struct ClientProfile {
    pub fetch_min_bytes: String,
    pub fetch_max_wait_ms: String,
    pub max_partition_fetch_bytes: String,
    pub linger_ms: String,
    pub acks: String,
    pub enable_idempotence: String,
    pub compression: String,
    /// How long the consumer postpones its next fetch once its prefetch
    /// queue is over its limits, which only a backlog fills.
    pub fetch_queue_backoff_ms: String,
    /// The consumer group session; rustpipe joins as a static member.
    pub session_timeout_ms: String,
    /// Its static member id, the same for a process restarted after a kill.
    pub group_instance_id: String,
    /// The transactional producer's retry backoff (exactly-once only).
    pub transaction_retry_backoff_ms: String,
    /// How long a transaction may stay open before the broker aborts it
    /// (exactly-once only).
    pub transaction_timeout_ms: String,
}

impl ClientProfile {
    fn from_env() -> Result<ClientProfile> {
        Ok(ClientProfile {
            fetch_min_bytes: var("BENCH_FETCH_MIN_BYTES")?,
            fetch_max_wait_ms: var("BENCH_FETCH_MAX_WAIT_MS")?,
            max_partition_fetch_bytes: var("BENCH_MAX_PARTITION_FETCH_BYTES")?,
            linger_ms: var("BENCH_LINGER_MS")?,
            acks: var("BENCH_ACKS")?,
            enable_idempotence: var("BENCH_ENABLE_IDEMPOTENCE")?,
            compression: var("BENCH_COMPRESSION")?,
            fetch_queue_backoff_ms: var("BENCH_FETCH_QUEUE_BACKOFF_MS")?,
            session_timeout_ms: var("BENCH_SESSION_TIMEOUT_MS")?,
            group_instance_id: var("BENCH_GROUP_INSTANCE_ID")?,
            transaction_retry_backoff_ms: var("BENCH_TRANSACTION_RETRY_BACKOFF_MS")?,
            transaction_timeout_ms: var("BENCH_TRANSACTION_TIMEOUT_MS")?,
        })
    }
}

/// The profile's keys and librdkafka's names for them, with the client
/// that takes each. The retry backoff and the transaction timeout are set
/// on the transactional producer only, so an at-least-once run reads
/// neither back.
const PROFILE_NAMES: [(&str, &str, Client); 11] = [
    ("fetch_min_bytes", "fetch.min.bytes", Client::Consumer),
    ("fetch_max_wait_ms", "fetch.wait.max.ms", Client::Consumer),
    (
        "max_partition_fetch_bytes",
        "max.partition.fetch.bytes",
        Client::Consumer,
    ),
    ("linger_ms", "linger.ms", Client::Producer),
    ("acks", "acks", Client::Producer),
    ("enable_idempotence", "enable.idempotence", Client::Producer),
    ("compression", "compression.type", Client::Producer),
    (
        "fetch_queue_backoff_ms",
        "fetch.queue.backoff.ms",
        Client::Consumer,
    ),
    ("session_timeout_ms", "session.timeout.ms", Client::Consumer),
    (
        "transaction_retry_backoff_ms",
        "retry.backoff.ms",
        Client::Producer,
    ),
    (
        "transaction_timeout_ms",
        "transaction.timeout.ms",
        Client::Producer,
    ),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Client {
    Consumer,
    Producer,
}

/// rustpipe's own options, from `settings` in its product.yaml.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineOptions {
    /// CPU burned per input record, in microseconds: a knob that lowers the
    /// pipeline's capacity on purpose, to check how the suite judges a product
    /// fed beyond it. 0 in every published configuration.
    #[serde(default)]
    pub work_us_per_record: u64,
    /// More CPU burned per input record, in nanoseconds, on top of
    /// `work_us_per_record`: a known extra cost fine enough to be a few per
    /// cent of rustpipe's own, to show the smallest regression the release
    /// gate catches. 0 in every published configuration.
    #[serde(default)]
    pub work_ns_per_record: u64,
    /// Faults put in on purpose, to check that verification catches them;
    /// 0 = off, and never set in a published configuration. Kept records
    /// whose sequence number is a multiple of `drop_every` are not written.
    #[serde(default)]
    pub drop_every: u64,
    /// Kept records whose sequence number is a multiple of `corrupt_every`
    /// get a wrong `latency_ratio`.
    #[serde(default)]
    pub corrupt_every: u64,
    /// Consume and produce, but never commit an input offset (at-least-once
    /// only): a product whose work the suite cannot vouch for.
    #[serde(default)]
    pub never_commit: bool,
    /// Once this many input records have been read (0 = never), the reader
    /// hands on what it holds and stops reading for `pause_ms`: output
    /// stops for that long at a known point of the input, to check that the
    /// suite's latency over time shows it as a stall.
    #[serde(default)]
    pub pause_after_records: u64,
    /// How long that pause lasts, in milliseconds.
    #[serde(default)]
    pub pause_ms: u64,
}

impl PipelineOptions {
    /// The work and fault knobs act in the stateless job's stage only: set
    /// for another workload, they would silently do nothing.
    fn check(&self, workload: Workload) -> Result<()> {
        let knobs = [
            self.work_us_per_record,
            self.work_ns_per_record,
            self.drop_every,
            self.corrupt_every,
        ];
        if workload != Workload::Stateless && knobs.iter().any(|&knob| knob > 0) {
            bail!(
                "rustpipe: work_us_per_record, work_ns_per_record, drop_every and corrupt_every \
                 act on the stateless workload only, not `{}`",
                workload.as_str()
            );
        }
        Ok(())
    }
}

fn var(name: &str) -> Result<String> {
    std::env::var(name).map_err(|_| anyhow!("rustpipe: {name} is not set (the suite sets it)"))
}

impl PipelineSettings {
    /// Reads the BENCH_* variables.
    pub fn from_env() -> Result<PipelineSettings> {
        let workload = Workload::parse(&var("BENCH_WORKLOAD")?)?;
        let delivery = var("BENCH_DELIVERY")?;
        let group_id = var("BENCH_GROUP_ID")?;
        let options = match std::env::var("BENCH_SETTINGS") {
            Ok(json) if !json.trim().is_empty() => serde_json::from_str(&json)
                .with_context(|| format!("rustpipe: BENCH_SETTINGS `{json}`"))?,
            _ => PipelineOptions::default(),
        };
        options.check(workload)?;
        Ok(PipelineSettings {
            bootstrap: var("BENCH_BOOTSTRAP")?,
            input_topic: var("BENCH_INPUT_TOPIC")?,
            output_topic: var("BENCH_OUTPUT_TOPIC")?,
            workload,
            delivery: Delivery::parse(&delivery).ok_or_else(|| {
                anyhow!("rustpipe: BENCH_DELIVERY `{delivery}` is not a delivery mode")
            })?,
            commit_interval_ms: var("BENCH_COMMIT_INTERVAL_MS")?
                .parse()
                .context("rustpipe: BENCH_COMMIT_INTERVAL_MS")?,
            transactional_id: std::env::var("BENCH_TRANSACTIONAL_ID")
                .unwrap_or_else(|_| format!("{group_id}-txn")),
            group_id,
            parallelism: match var("BENCH_PARALLELISM")?.parse() {
                Ok(n) if n >= 1 => n,
                _ => bail!("rustpipe: BENCH_PARALLELISM must be a whole number from 1"),
            },
            client: ClientProfile::from_env()?,
            options,
        })
    }

    /// The consumer, with the profile's fetch settings.
    pub fn consumer_config(&self) -> ClientConfig {
        let mut config = ClientConfig::new();
        config
            .set("bootstrap.servers", &self.bootstrap)
            .set("group.id", &self.group_id)
            .set("auto.offset.reset", "earliest")
            .set("fetch.min.bytes", &self.client.fetch_min_bytes)
            .set("fetch.wait.max.ms", &self.client.fetch_max_wait_ms)
            .set(
                "max.partition.fetch.bytes",
                &self.client.max_partition_fetch_bytes,
            )
            .set("isolation.level", "read_committed")
            .set(
                "fetch.queue.backoff.ms",
                &self.client.fetch_queue_backoff_ms,
            )
            // Static membership, as every product whose client has it: a
            // restarted rustpipe takes its partitions back at once instead
            // of waiting out the dead member's session.
            .set("group.instance.id", &self.client.group_instance_id)
            .set("session.timeout.ms", &self.client.session_timeout_ms);
        match self.delivery {
            Delivery::AtLeastOnce => config
                .set("enable.auto.commit", "true")
                .set("enable.auto.offset.store", "false")
                .set(
                    "auto.commit.interval.ms",
                    self.commit_interval_ms.to_string(),
                ),
            Delivery::ExactlyOnce => config.set("enable.auto.commit", "false"),
        };
        config
    }

    /// The producer, with the profile's settings; transactional for exactly-once.
    pub fn producer_config(&self) -> ClientConfig {
        let mut config = ClientConfig::new();
        config
            .set("bootstrap.servers", &self.bootstrap)
            .set("acks", &self.client.acks)
            .set("enable.idempotence", &self.client.enable_idempotence)
            .set("linger.ms", &self.client.linger_ms)
            .set("compression.type", &self.client.compression);
        if self.delivery == Delivery::ExactlyOnce {
            config
                .set("transactional.id", &self.transactional_id)
                .set(
                    "retry.backoff.ms",
                    &self.client.transaction_retry_backoff_ms,
                )
                .set(
                    "retry.backoff.max.ms",
                    &self.client.transaction_retry_backoff_ms,
                )
                .set(
                    "transaction.timeout.ms",
                    &self.client.transaction_timeout_ms,
                );
        }
        config
    }

    /// The line rustpipe prints before it is ready: the profile as read
    /// back from the two client configurations it creates, keyed by the
    /// profile's names, plus its commit interval.
    pub fn effective_client_config(
        &self,
        consumer: &ClientConfig,
        producer: &ClientConfig,
    ) -> String {
        let mut applied = serde_json::Map::new();
        for (key, name, client) in PROFILE_NAMES {
            let config = match client {
                Client::Consumer => consumer,
                Client::Producer => producer,
            };
            if let Some(value) = config.get(name) {
                applied.insert(key.to_string(), typed(key, value));
            }
        }
        applied.insert(
            "commit_interval_ms".to_string(),
            serde_json::Value::from(self.commit_interval_ms),
        );
        format!(
            "effective client config: {}",
            serde_json::Value::Object(applied)
        )
    }
}

/// A librdkafka value as JSON: numbers and booleans typed; acks stays a string.
fn typed(key: &str, value: &str) -> serde_json::Value {
    match value {
        _ if key == "acks" => serde_json::Value::String(value.to_string()),
        "true" => serde_json::Value::Bool(true),
        "false" => serde_json::Value::Bool(false),
        _ => value
            .parse::<u64>()
            .map(serde_json::Value::from)
            .unwrap_or_else(|_| serde_json::Value::String(value.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_workload_rustpipe_runs_is_named_as_the_suite_spells_it() {
        for workload in [
            Workload::Stateless,
            Workload::Passthrough,
            Workload::WindowedLowcard,
            Workload::AvroEtl,
        ] {
            assert_eq!(Workload::parse(workload.as_str()).unwrap(), workload);
        }
    }

    #[test]
    fn an_unknown_workload_is_an_error_not_the_stateless_job() {
        let err = Workload::parse("windowed-highcard").unwrap_err();
        assert_eq!(
            err.to_string(),
            "rustpipe: workload `windowed-highcard` is not implemented"
        );
    }

    #[test]
    fn the_stage_knobs_are_refused_outside_the_stateless_job() {
        let options = PipelineOptions {
            drop_every: 10,
            ..PipelineOptions::default()
        };
        assert!(options.check(Workload::Stateless).is_ok());
        assert!(options.check(Workload::Passthrough).is_err());
        assert!(options.check(Workload::WindowedLowcard).is_err());
        assert!(PipelineOptions::default()
            .check(Workload::WindowedLowcard)
            .is_ok());
    }

    fn settings(delivery: Delivery) -> PipelineSettings {
        PipelineSettings {
            bootstrap: "127.0.0.1:9092".into(),
            input_topic: "in".into(),
            output_topic: "out".into(),
            group_id: "g".into(),
            workload: Workload::Stateless,
            delivery,
            commit_interval_ms: 10,
            transactional_id: "g-txn".into(),
            parallelism: 1,
            client: ClientProfile {
                fetch_min_bytes: "1".into(),
                fetch_max_wait_ms: "10".into(),
                max_partition_fetch_bytes: "52428800".into(),
                linger_ms: "1".into(),
                acks: "all".into(),
                enable_idempotence: "true".into(),
                compression: "lz4".into(),
                fetch_queue_backoff_ms: "3".into(),
                session_timeout_ms: "10000".into(),
                group_instance_id: "g-member".into(),
                transaction_retry_backoff_ms: "7".into(),
                transaction_timeout_ms: "9000".into(),
            },
            options: PipelineOptions::default(),
        }
    }

    #[test]
    fn the_retry_backoff_and_timeout_go_to_the_transactional_producer_alone() {
        let reported = |delivery| {
            let s = settings(delivery);
            let line = s.effective_client_config(&s.consumer_config(), &s.producer_config());
            let json = line.strip_prefix("effective client config: ").unwrap();
            serde_json::from_str::<serde_json::Value>(json).unwrap()
        };
        let eos = reported(Delivery::ExactlyOnce);
        assert_eq!(eos["transaction_retry_backoff_ms"], serde_json::json!(7));
        assert_eq!(eos["transaction_timeout_ms"], serde_json::json!(9000));
        assert_eq!(eos["session_timeout_ms"], serde_json::json!(10000));
        let producer = settings(Delivery::ExactlyOnce).producer_config();
        assert_eq!(producer.get("retry.backoff.max.ms"), Some("7"));
        assert_eq!(producer.get("transaction.timeout.ms"), Some("9000"));
        let alos = reported(Delivery::AtLeastOnce);
        assert!(alos.get("transaction_retry_backoff_ms").is_none());
        assert!(alos.get("transaction_timeout_ms").is_none());
        let alos_producer = settings(Delivery::AtLeastOnce).producer_config();
        assert!(alos_producer.get("transaction.timeout.ms").is_none());
        assert_eq!(alos["session_timeout_ms"], serde_json::json!(10000));
        let consumer = settings(Delivery::AtLeastOnce).consumer_config();
        assert_eq!(consumer.get("group.instance.id"), Some("g-member"));
    }

    #[test]
    fn the_fetch_queue_backoff_is_the_profiles_and_reported() {
        for delivery in [Delivery::AtLeastOnce, Delivery::ExactlyOnce] {
            let s = settings(delivery);
            let consumer = s.consumer_config();
            assert_eq!(consumer.get("fetch.queue.backoff.ms"), Some("3"));
            let line = s.effective_client_config(&consumer, &s.producer_config());
            let json = line.strip_prefix("effective client config: ").unwrap();
            let reported: serde_json::Value = serde_json::from_str(json).unwrap();
            assert_eq!(reported["fetch_queue_backoff_ms"], serde_json::json!(3));
        }
    }
}
