//! What a run record says of its broker.

use serde::{Deserialize, Serialize};

/// What a result records about its broker.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BrokerInfo {
    pub kind: String,
    pub version: Option<String>,
    pub bootstrap: String,
    /// The suite started the broker for this batch: it was cold.
    #[serde(default)]
    pub started_for_batch: bool,
    /// Seconds of warm-up load the local broker had before any run used
    /// it; absent for an external broker, or one started before warm-ups
    /// were noted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmed_s: Option<f64>,
    /// Seconds the local broker's process had been up when the batch began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uptime_s: Option<f64>,
}
