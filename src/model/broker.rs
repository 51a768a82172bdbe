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
    /// Seconds the local broker's process had been up when the batch began
    /// (its first node's, in a cluster).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uptime_s: Option<f64>,
    /// Brokers in the cluster: the local cluster's nodes, or the brokers an
    /// external cluster's metadata lists.
    #[serde(default = "one")]
    pub nodes: u32,
    /// Replicas of each run topic.
    #[serde(default = "one")]
    pub replication: u32,
    /// The run topics' min.insync.replicas.
    #[serde(default = "one")]
    pub min_insync_replicas: u32,
    /// How often the broker aborts transactions open past their timeout,
    /// in ms, as the broker reports it: part of an exactly-once line's
    /// recovery when its restarted process fences nothing. Absent when the
    /// broker did not say, and in records from before it was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abandoned_transaction_check_ms: Option<u64>,
}

/// How a run's topics are replicated, on either kind of broker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replicas {
    pub replication: u32,
    pub min_insync_replicas: u32,
}

/// Records from before clusters ran on one broker with one replica.
fn one() -> u32 {
    1
}

impl BrokerInfo {
    /// How the run's topics are replicated.
    pub fn replicas(&self) -> Replicas {
        Replicas {
            replication: self.replication,
            min_insync_replicas: self.min_insync_replicas,
        }
    }

    /// The cluster's shape: part of the bench point.
    pub fn shape(&self) -> BrokerShape {
        BrokerShape {
            nodes: self.nodes,
            replicas: self.replicas(),
        }
    }
}

/// How many brokers a run's cluster had and how its topics were replicated:
/// replication makes every acknowledged write, and so every commit, cost
/// more, so runs on two shapes are two bench points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BrokerShape {
    pub nodes: u32,
    pub replicas: Replicas,
}

impl std::fmt::Display for BrokerShape {
    /// "3 nodes, replication 3, min ISR 2".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} node{}, replication {}, min ISR {}",
            self.nodes,
            if self.nodes == 1 { "" } else { "s" },
            self.replicas.replication,
            self.replicas.min_insync_replicas
        )
    }
}
