//! The settings a run record carries beside its figures: the delivery mode,
//! the profile, the commit intervals and the ETL arm. The configuration
//! reads them; results and pages compare runs by them.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The delivery guarantee of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Delivery {
    AtLeastOnce,
    ExactlyOnce,
}

impl Delivery {
    /// The `--mode` spelling.
    pub fn short(self) -> &'static str {
        match self {
            Delivery::AtLeastOnce => "alos",
            Delivery::ExactlyOnce => "eos",
        }
    }

    /// The spelling in results and in BENCH_DELIVERY.
    pub fn as_str(self) -> &'static str {
        match self {
            Delivery::AtLeastOnce => "at-least-once",
            Delivery::ExactlyOnce => "exactly-once",
        }
    }

    /// Parses either spelling.
    pub fn parse(text: &str) -> Option<Delivery> {
        match text {
            "alos" | "at-least-once" => Some(Delivery::AtLeastOnce),
            "eos" | "exactly-once" => Some(Delivery::ExactlyOnce),
            _ => None,
        }
    }
}

impl fmt::Display for Delivery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which settings a run's product was configured with.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// bench.yaml's client profile and each product's own settings, the
    /// same rules for every line.
    #[default]
    Uniform,
    /// Each product's `expert:` section over the uniform profile.
    Expert,
}

impl Profile {
    pub fn is_uniform(&self) -> bool {
        *self == Profile::Uniform
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Uniform => "uniform",
            Profile::Expert => "expert",
        }
    }
}

/// The commit interval of each delivery mode. Exactly-once output becomes
/// visible at a commit, so those lines commit at the in-house pipeline's
/// batch timeout; at-least-once output does not wait for a commit, so a
/// short interval would only tax those lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommitIntervals {
    #[serde(rename = "exactly-once")]
    pub exactly_once: u64,
    #[serde(rename = "at-least-once")]
    pub at_least_once: u64,
}

impl CommitIntervals {
    /// The interval a line of `delivery` commits at, in ms.
    pub fn for_delivery(&self, delivery: Delivery) -> u64 {
        match delivery {
            Delivery::ExactlyOnce => self.exactly_once,
            Delivery::AtLeastOnce => self.at_least_once,
        }
    }
}

/// The avro-etl workload's arm and sink settings, handed to the product as
/// BENCH_ETL_*. A line may set them for itself (`rustpipe@etl.decoder=...`),
/// so arms run interleaved in one batch.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EtlConfig {
    /// fast-borrowed, fast-owned or apache-owned: the Avro decoder; none:
    /// the raw arm, each message passed through as one row of its bytes.
    pub decoder: EtlDecoder,
    /// The insert format: rowbinary or native.
    pub format: InsertFormat,
    /// Events per Kafka message (one Avro batch datum).
    pub events: u32,
    /// An insert is sent once a block holds this many rows ...
    pub block_rows: u32,
    /// ... or its first row is this old.
    pub flush_ms: u64,
    /// Inserts in flight at once; with all of them busy, consumption pauses.
    pub max_in_flight: u32,
}

impl Default for EtlConfig {
    fn default() -> EtlConfig {
        EtlConfig {
            decoder: EtlDecoder::FastBorrowed,
            format: InsertFormat::RowBinary,
            events: 20,
            block_rows: 65_536,
            flush_ms: 200,
            max_in_flight: 2,
        }
    }
}

/// The avro-etl decoders, as the product knows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EtlDecoder {
    FastBorrowed,
    FastOwned,
    ApacheOwned,
    /// The raw arm: no decoding, one row per message.
    None,
}

impl EtlDecoder {
    pub fn as_str(self) -> &'static str {
        match self {
            EtlDecoder::FastBorrowed => "fast-borrowed",
            EtlDecoder::FastOwned => "fast-owned",
            EtlDecoder::ApacheOwned => "apache-owned",
            EtlDecoder::None => "none",
        }
    }
}

/// ClickHouse insert formats the product writes itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InsertFormat {
    RowBinary,
    Native,
}

impl InsertFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            InsertFormat::RowBinary => "rowbinary",
            InsertFormat::Native => "native",
        }
    }
}
