//! Fault injection (`--chaos`, `suite chaos`, planned in
//! [`crate::config::ChaosPlan`]): the faults in time order, the local
//! broker's crash and restart, and how long until output flows again.

use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context, Result};
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::consumer::BaseConsumer;
use rdkafka::{ClientConfig, Offset};

use crate::broker::admin::{self, assign_all, recoverable, OffsetReader};
use crate::broker::{LocalBroker, NodeId};
use crate::clock::now_us;
use crate::config::ChaosPlan;
use crate::interrupt::{Interrupt, Interrupted};
use crate::results::{BrokerRestart, Kill};

/// One fault of a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// SIGKILL to the product's whole tree (and a restart, if planned).
    Kill,
    /// SIGKILL to a node of the local broker, then a start on its data.
    BrokerRestart,
}

/// The plan's faults in time order, at epoch microseconds; a kill and a
/// broker restart planned for one instant go kill first.
pub fn schedule(plan: &ChaosPlan, window_start_us: i64) -> Vec<(i64, Fault)> {
    let mut faults: Vec<(i64, Fault)> = plan
        .kills_ms
        .iter()
        .map(|&ms| (window_start_us + ms as i64 * 1000, Fault::Kill))
        .chain(
            plan.broker_restart_at_s
                .map(|s| (window_start_us + s as i64 * 1_000_000, Fault::BrokerRestart)),
        )
        .collect();
    faults.sort_by_key(|&(at_us, fault)| (at_us, fault == Fault::BrokerRestart));
    faults
}

/// How long the run waits, after the broker answers again, for the group
/// coordinator to serve the run's committed offsets.
const COORDINATOR_BACK: Duration = Duration::from_secs(60);

/// A kill injected into the product, until its outcome is known.
pub struct InjectedKill {
    pub killed_at_us: i64,
    pub killed_processes: usize,
    /// The member killed (`taskmanager-1`); none when the whole product was.
    pub member: Option<String>,
    pub watch: ResumeWatch,
}

impl InjectedKill {
    /// The record's account of the kill, once its watch is over.
    pub fn outcome(self, window_start_us: i64) -> Result<Kill> {
        let resumed = self.watch.resumed_at()?;
        Ok(Kill {
            at_s: (self.killed_at_us - window_start_us) as f64 / 1e6,
            killed_processes: self.killed_processes,
            member: self.member,
            recovery_ms: resumed.map(|at| (at - self.killed_at_us) as f64 / 1000.0),
        })
    }
}

/// A node of the local broker crashed and started again, until the
/// outcome is known.
pub struct InjectedBrokerRestart {
    killed_at_us: i64,
    node: NodeId,
    cluster: bool,
    was_leader: bool,
    failover_at_us: Option<i64>,
    back_at_us: i64,
    watch: ResumeWatch,
    /// The restarted node's log, read for transaction markers it dropped.
    log: PathBuf,
    /// What names every topic and transactional id of the run.
    run_tag: String,
}

/// How long a cluster may take to elect another leader of the input
/// partition before the run goes on without a failover figure.
const FAILOVER_BOUND: Duration = Duration::from_secs(60);

/// Where a broker fault lands.
pub struct BrokerFault<'a> {
    pub broker: &'a LocalBroker,
    /// Kill the input partition's leader rather than the last node.
    pub leader: bool,
    pub input: &'a str,
    pub output: &'a str,
    /// The prefix of every name the run gives the broker.
    pub run_tag: &'a str,
}

impl InjectedBrokerRestart {
    /// Kills a node of the broker with SIGKILL (the input partition's
    /// leader if asked, else the last node), waits in a cluster for another
    /// node to lead the input partition, and starts the node again on its
    /// data. Returns once it is back in the cluster and the run's committed
    /// offsets are served again, with the output watched until
    /// `watch_until_us`: from the kill in a cluster, whose other nodes keep
    /// serving; from the node's return on a single node, as output written
    /// before a client could reconnect would count as later.
    pub fn inject(
        fault: BrokerFault<'_>,
        offsets: &OffsetReader,
        watch_until_us: i64,
        interrupt: &Interrupt,
    ) -> Result<InjectedBrokerRestart> {
        let BrokerFault {
            broker,
            leader,
            input,
            output,
            run_tag,
        } = fault;
        let bootstrap = broker.bootstrap();
        let input_leader = admin::partition_leader(&bootstrap, input, 0)?;
        let node = match (leader, input_leader) {
            (true, Some(id)) => NodeId(id as u32),
            (true, None) => anyhow::bail!("chaos: the input partition has no leader to kill"),
            (false, _) => NodeId(broker.nodes()),
        };
        let was_leader = input_leader == Some(node.0 as i32);
        let cluster = broker.nodes() > 1;
        let killed_at_us = now_us();
        broker.kill(node)?;
        let early_watch = cluster
            .then(|| ResumeWatch::start(&bootstrap, output, watch_until_us))
            .transpose()?;
        let failover_at_us = if cluster && was_leader {
            wait_for_new_leader(&bootstrap, input, node, interrupt)?
        } else {
            None
        };
        broker
            .start(interrupt)
            .context("chaos: starting the killed broker node again")?;
        let back_at_us = now_us();
        let deadline = std::time::Instant::now() + COORDINATOR_BACK;
        while let Err(err) = offsets.committed(input) {
            if interrupt.is_set() {
                return Err(Interrupted.into());
            }
            if std::time::Instant::now() > deadline {
                return Err(err.context(format!(
                    "chaos: the restarted broker served no committed offsets within {} s",
                    COORDINATOR_BACK.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        let watch = match early_watch {
            Some(watch) => watch,
            None => ResumeWatch::start(&bootstrap, output, watch_until_us)?,
        };
        Ok(InjectedBrokerRestart {
            killed_at_us,
            node,
            cluster,
            was_leader,
            failover_at_us,
            back_at_us,
            watch,
            log: broker.node_log(node),
            run_tag: run_tag.to_string(),
        })
    }

    /// The record's account of the restart, once its watch is over.
    pub fn outcome(self, window_start_us: i64) -> Result<BrokerRestart> {
        let resumed = self.watch.resumed_at()?;
        let since_kill = |at_us: i64| (at_us - self.killed_at_us) as f64 / 1000.0;
        Ok(BrokerRestart {
            at_s: (self.killed_at_us - window_start_us) as f64 / 1e6,
            node: self.cluster.then_some(self.node.0),
            was_leader: self.was_leader,
            failover_ms: self.failover_at_us.map(since_kill),
            outage_ms: since_kill(self.back_at_us),
            recovery_ms: resumed.map(since_kill),
            dropped_markers: dropped_markers(&self.log, &self.run_tag),
        })
    }
}

/// What Kafka writes when it skips the markers of a transaction it is
/// completing to partitions it finds without a leader.
const DROPPED_MARKERS: &str = "likely deleted already and hence can be skipped";

/// The run's partitions whose transaction markers the restarted node
/// dropped, as its log names them. A log that cannot be read names none:
/// the verification still counts what the drop did.
fn dropped_markers(log: &Path, run_tag: &str) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(log) else {
        return Vec::new();
    };
    dropped_marker_partitions(&text, run_tag)
}

/// The partitions in `text`'s dropped-marker lines that name `run_tag`.
fn dropped_marker_partitions(text: &str, run_tag: &str) -> Vec<String> {
    let mut partitions: Vec<String> = text
        .lines()
        .filter(|line| line.contains(DROPPED_MARKERS) && line.contains(run_tag))
        .filter_map(|line| {
            let set = line.split_once("partitions Set(")?.1;
            Some(set.split_once(')')?.0)
        })
        .flat_map(|set| set.split(',').map(|p| p.trim().to_string()))
        .filter(|p| !p.is_empty())
        .collect();
    partitions.sort();
    partitions.dedup();
    partitions
}

/// Polls the input partition's leader until a node other than `killed`
/// leads it; when, or None if none did within [`FAILOVER_BOUND`].
fn wait_for_new_leader(
    bootstrap: &str,
    input: &str,
    killed: NodeId,
    interrupt: &Interrupt,
) -> Result<Option<i64>> {
    let deadline = std::time::Instant::now() + FAILOVER_BOUND;
    while std::time::Instant::now() < deadline {
        // A read can fail while the dead node still holds the controller's
        // role; the next one goes to the others.
        if let Ok(Some(id)) = admin::partition_leader(bootstrap, input, 0) {
            if id != killed.0 as i32 {
                return Ok(Some(now_us()));
            }
        }
        if interrupt.is_set() {
            return Err(Interrupted.into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(None)
}

/// Waits, on a thread of its own, for the first record to become visible on
/// the output topic after the kill.
///
/// It reads read_committed from the end as it stands just after the kill:
/// whatever the killed process had written is behind it, and its open
/// transaction, if any, is aborted and never shows. So the first record it
/// sees is the restarted product's.
pub struct ResumeWatch {
    thread: JoinHandle<Result<Option<i64>>>,
}

impl ResumeWatch {
    /// Starts watching `topic` until a record arrives or `deadline_us` passes.
    pub fn start(bootstrap: &str, topic: &str, deadline_us: i64) -> Result<ResumeWatch> {
        let consumer: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .set("group.id", format!("{topic}-resume"))
            .set("enable.auto.commit", "false")
            .set("isolation.level", "read_committed")
            .set("fetch.wait.max.ms", "10")
            .set_log_level(RDKafkaLogLevel::Critical)
            .create()
            .context("chaos: creating the output watcher")?;
        assign_all(&consumer, &[topic], Offset::End).context("chaos")?;
        let thread = std::thread::spawn(move || {
            while now_us() < deadline_us {
                match consumer.poll(Duration::from_millis(10)) {
                    Some(Ok(_)) => return Ok(Some(now_us())),
                    Some(Err(err)) if recoverable(&err) => {}
                    Some(Err(err)) => return Err(err).context("chaos: watching the output"),
                    None => {}
                }
            }
            Ok(None)
        });
        Ok(ResumeWatch { thread })
    }

    /// When output resumed (epoch microseconds), or `None` if not by the deadline.
    pub fn resumed_at(self) -> Result<Option<i64>> {
        self.thread
            .join()
            .map_err(|_| anyhow::anyhow!("chaos: the output watcher panicked"))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropped_markers_are_the_runs_partitions_named_in_kafkas_skip_lines() {
        let log = "\
[2026-12-07 21:44:31,668] INFO [TransactionCoordinator id=1] Completed rollback of ongoing transaction for transactionalId ss-r1-txn due to timeout
[2026-12-07 21:44:33,683] INFO [Transaction Marker Channel Manager 1]: Couldn't find leader endpoint for partitions Set(__consumer_offsets-2) while trying to send transaction markers for ss-r1-txn, these partitions are likely deleted already and hence can be skipped (kafka.coordinator.transaction.TransactionMarkerChannelManager)
[2026-12-07 21:44:33,687] INFO [Transaction Marker Channel Manager 1]: Couldn't find leader endpoint for partitions Set(ss-r1-out-0, ss-r1-out-1) while trying to send transaction markers for ss-r1-txn, these partitions are likely deleted already and hence can be skipped (kafka.coordinator.transaction.TransactionMarkerChannelManager)
[2026-12-07 21:44:33,690] INFO [Transaction Marker Channel Manager 1]: Couldn't find leader endpoint for partitions Set(ss-r0-out-0) while trying to send transaction markers for ss-r0-txn, these partitions are likely deleted already and hence can be skipped (kafka.coordinator.transaction.TransactionMarkerChannelManager)
";
        assert_eq!(
            dropped_marker_partitions(log, "ss-r1"),
            ["__consumer_offsets-2", "ss-r1-out-0", "ss-r1-out-1"]
        );
        assert!(dropped_marker_partitions(log, "ss-r2").is_empty());
    }

    #[test]
    fn faults_come_in_time_order_kill_first_at_one_instant() {
        let plan = ChaosPlan {
            kills_ms: vec![5_000, 20_000],
            restart: true,
            broker_restart_at_s: Some(5),
            broker_leader: false,
            member: None,
        };
        assert_eq!(
            schedule(&plan, 1_000_000),
            [
                (6_000_000, Fault::Kill),
                (6_000_000, Fault::BrokerRestart),
                (21_000_000, Fault::Kill)
            ]
        );
    }
}
