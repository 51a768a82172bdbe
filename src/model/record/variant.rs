//! Which arm of the Avro pipeline a record measured.

use serde::{Deserialize, Serialize};

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
