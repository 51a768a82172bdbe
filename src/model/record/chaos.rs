//! A record's chaos block: the faults a run injected and how the product
//! came through each. Read in this version's form or the one-kill form of
//! older records.

use serde::{Deserialize, Serialize};

/// The faults a chaos run injected (`--chaos`, `suite chaos`), and how the
/// product came through each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "StoredChaos")]
pub struct Chaos {
    /// Whether the product was started again, with the same identity, after
    /// each kill.
    pub restart: bool,
    /// Each SIGKILL of the product's whole tree, in order.
    pub kills: Vec<Kill>,
    /// Kills after which output flowed again.
    pub kills_survived: usize,
    /// The median and the longest of the kills' recovery times; absent when
    /// no kill was recovered from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_p50_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_max_ms: Option<f64>,
    /// The local broker's SIGKILL and restart, when the run had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broker_restart: Option<BrokerRestart>,
}

/// One SIGKILL of the product's tree, or of one member of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Kill {
    /// Seconds into the window.
    pub at_s: f64,
    /// Processes of the product's tree that were killed.
    pub killed_processes: usize,
    /// The member of the product's deployment killed alone (`taskmanager-1`);
    /// absent when the whole product was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<String>,
    /// From the kill until a newly committed output record was visible;
    /// `null` when output did not flow again before the next fault or the
    /// window's end.
    pub recovery_ms: Option<f64>,
}

/// A node of the local broker killed with SIGKILL and started again on its
/// data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BrokerRestart {
    /// Seconds into the window.
    pub at_s: f64,
    /// The node killed, in a cluster (node ids count from 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<u32>,
    /// Whether that node led the input partition when it was killed.
    #[serde(default)]
    pub was_leader: bool,
    /// From the kill until another node led the input partition: the
    /// cluster's leader failover. `null` when the killed node did not lead
    /// it, or had no other node to fail over to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failover_ms: Option<f64>,
    /// From the kill until the node answered again as part of the cluster.
    pub outage_ms: f64,
    /// From the kill until a newly committed output record was visible;
    /// `null` when output did not flow again before the window's end.
    pub recovery_ms: Option<f64>,
    /// The run's partitions whose transaction markers the restarted node
    /// dropped, as its log says. Kafka skips the markers to a partition it
    /// finds without a leader; the transaction's records there stay
    /// unmarked, and the producer's next commit takes them in, so
    /// exactly-once cannot hold through such a restart.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped_markers: Vec<String>,
}

impl Chaos {
    /// The record of `kills` and `broker_restart`, with the kills' figures.
    pub fn new(restart: bool, kills: Vec<Kill>, broker_restart: Option<BrokerRestart>) -> Chaos {
        let mut recoveries: Vec<f64> = kills.iter().filter_map(|k| k.recovery_ms).collect();
        recoveries.sort_by(f64::total_cmp);
        let p50 = match recoveries.len() {
            0 => None,
            n if n % 2 == 1 => Some(recoveries[n / 2]),
            n => Some((recoveries[n / 2 - 1] + recoveries[n / 2]) / 2.0),
        };
        Chaos {
            restart,
            kills_survived: recoveries.len(),
            recovery_p50_ms: p50,
            recovery_max_ms: recoveries.last().copied(),
            kills,
            broker_restart,
        }
    }
}

/// A chaos block as stored: this version's, or the one-kill form of older
/// records (`kill_at_s`, `killed_processes`, `recovery_ms` at the top).
#[derive(Deserialize)]
#[serde(untagged)]
enum StoredChaos {
    Current {
        restart: bool,
        kills: Vec<Kill>,
        #[serde(default)]
        broker_restart: Option<BrokerRestart>,
    },
    OneKill {
        kill_at_s: u64,
        restart: bool,
        killed_processes: usize,
        recovery_ms: Option<f64>,
    },
}

impl From<StoredChaos> for Chaos {
    fn from(stored: StoredChaos) -> Chaos {
        match stored {
            StoredChaos::Current {
                restart,
                kills,
                broker_restart,
            } => Chaos::new(restart, kills, broker_restart),
            StoredChaos::OneKill {
                kill_at_s,
                restart,
                killed_processes,
                recovery_ms,
            } => Chaos::new(
                restart,
                vec![Kill {
                    at_s: kill_at_s as f64,
                    killed_processes,
                    member: None,
                    recovery_ms,
                }],
                None,
            ),
        }
    }
}
