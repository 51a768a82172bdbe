//! bench.yaml's `broker:`: the local Kafka the suite starts, or an external
//! cluster, and the shape of the run topics' replicas.

use serde::{Deserialize, Serialize};

use crate::model::broker::{BrokerShape, Replicas};

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

    /// A cluster the suite can start, and replicas it can place.
    pub(super) fn check_shape(&self) -> Result<(), (Option<&'static str>, String)> {
        let Replicas {
            replication,
            min_insync_replicas,
        } = self.replicas();
        if let BrokerConfig::Local { nodes, port, .. } = self {
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

/// The most nodes a local cluster may have: each is a JVM on this host.
const MAX_LOCAL_NODES: u32 = 5;
