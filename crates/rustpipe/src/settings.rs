//! rustpipe's settings, read from the BENCH_* variables every product gets.

use anyhow::{anyhow, Context, Result};
use rdkafka::config::ClientConfig;

/// How rustpipe delivers, from BENCH_DELIVERY.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Produce a batch, wait for its acknowledgements, then store its offsets
    /// for the next auto-commit.
    AtLeastOnce,
    /// One Kafka transaction per batch, carrying its outputs and input offsets.
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

/// Everything rustpipe needs to know about its run.
#[derive(Debug, Clone)]
pub struct PipelineSettings {
    pub bootstrap: String,
    pub input_topic: String,
    pub output_topic: String,
    pub group_id: String,
    pub delivery: Delivery,
    pub commit_interval_ms: u64,
    pub transactional_id: String,
    /// Options from the product's `settings` (BENCH_SETTINGS).
    pub options: PipelineOptions,
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
}

fn var(name: &str) -> Result<String> {
    std::env::var(name).map_err(|_| anyhow!("rustpipe: {name} is not set (the suite sets it)"))
}

impl PipelineSettings {
    /// Reads the BENCH_* variables.
    pub fn from_env() -> Result<PipelineSettings> {
        let delivery = var("BENCH_DELIVERY")?;
        let group_id = var("BENCH_GROUP_ID")?;
        Ok(PipelineSettings {
            bootstrap: var("BENCH_BOOTSTRAP")?,
            input_topic: var("BENCH_INPUT_TOPIC")?,
            output_topic: var("BENCH_OUTPUT_TOPIC")?,
            delivery: Delivery::parse(&delivery).ok_or_else(|| {
                anyhow!("rustpipe: BENCH_DELIVERY `{delivery}` is not a delivery mode")
            })?,
            commit_interval_ms: var("BENCH_COMMIT_INTERVAL_MS")?
                .parse()
                .context("rustpipe: BENCH_COMMIT_INTERVAL_MS")?,
            transactional_id: std::env::var("BENCH_TRANSACTIONAL_ID")
                .unwrap_or_else(|_| format!("{group_id}-txn")),
            group_id,
            options: match std::env::var("BENCH_SETTINGS") {
                Ok(json) if !json.trim().is_empty() => serde_json::from_str(&json)
                    .with_context(|| format!("rustpipe: BENCH_SETTINGS `{json}`"))?,
                _ => PipelineOptions::default(),
            },
        })
    }

    /// The consumer: a large prefetch, fetches answered within 10 ms.
    pub fn consumer_config(&self) -> ClientConfig {
        let mut config = ClientConfig::new();
        config
            .set("bootstrap.servers", &self.bootstrap)
            .set("group.id", &self.group_id)
            .set("auto.offset.reset", "earliest")
            .set("fetch.min.bytes", "65536")
            .set("fetch.wait.max.ms", "10")
            .set("max.partition.fetch.bytes", "52428800")
            .set("isolation.level", "read_committed")
            // Static membership: a restarted rustpipe takes its partitions
            // back at once instead of waiting out the dead member's session.
            .set("group.instance.id", format!("{}-rustpipe", self.group_id))
            .set("session.timeout.ms", "10000");
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

    /// The producer: idempotent, lz4, 5 ms linger; transactional for exactly-once.
    pub fn producer_config(&self) -> ClientConfig {
        let mut config = ClientConfig::new();
        config
            .set("bootstrap.servers", &self.bootstrap)
            .set("acks", "all")
            .set("enable.idempotence", "true")
            .set("linger.ms", "5")
            .set("compression.type", "lz4");
        if self.delivery == Delivery::ExactlyOnce {
            config.set("transactional.id", &self.transactional_id);
        }
        config
    }
}
