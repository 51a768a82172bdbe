//! Fault injection (`--chaos`, `suite chaos`, planned in
//! [`crate::config::ChaosPlan`]): the faults in time order, the local
//! broker's crash and restart, and how long until output flows again.

use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context, Result};
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::consumer::BaseConsumer;
use rdkafka::{ClientConfig, Offset};

use crate::broker::admin::{assign_all, recoverable, OffsetReader};
use crate::broker::LocalBroker;
use crate::clock::now_us;
use crate::config::ChaosPlan;
use crate::interrupt::{Interrupt, Interrupted};
use crate::results::{BrokerRestart, Kill};

/// One fault of a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// SIGKILL to the product's whole tree (and a restart, if planned).
    Kill,
    /// SIGKILL to the local broker, then a start on its data.
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
    pub watch: ResumeWatch,
}

impl InjectedKill {
    /// The record's account of the kill, once its watch is over.
    pub fn outcome(self, window_start_us: i64) -> Result<Kill> {
        let resumed = self.watch.resumed_at()?;
        Ok(Kill {
            at_s: (self.killed_at_us - window_start_us) as f64 / 1e6,
            killed_processes: self.killed_processes,
            recovery_ms: resumed.map(|at| (at - self.killed_at_us) as f64 / 1000.0),
        })
    }
}

/// The local broker's crash and restart, until its outcome is known.
pub struct InjectedBrokerRestart {
    killed_at_us: i64,
    back_at_us: i64,
    watch: ResumeWatch,
}

impl InjectedBrokerRestart {
    /// Kills `broker` with SIGKILL and starts it again on its data; returns
    /// once it answers and serves the run's committed offsets again, with
    /// the output watched from then until `watch_until_us`. Output written
    /// between the broker's return and the watch's first fetch would count
    /// as later: a product's clients take longer than that to reconnect.
    pub fn inject(
        broker: &LocalBroker,
        offsets: &OffsetReader,
        input: &str,
        output: &str,
        watch_until_us: i64,
        interrupt: &Interrupt,
    ) -> Result<InjectedBrokerRestart> {
        let killed_at_us = now_us();
        broker.kill()?;
        broker
            .start(interrupt)
            .context("chaos: starting the local broker again")?;
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
        Ok(InjectedBrokerRestart {
            killed_at_us,
            back_at_us,
            watch: ResumeWatch::start(&broker.bootstrap(), output, watch_until_us)?,
        })
    }

    /// The record's account of the restart, once its watch is over.
    pub fn outcome(self, window_start_us: i64) -> Result<BrokerRestart> {
        let resumed = self.watch.resumed_at()?;
        Ok(BrokerRestart {
            at_s: (self.killed_at_us - window_start_us) as f64 / 1e6,
            outage_ms: (self.back_at_us - self.killed_at_us) as f64 / 1000.0,
            recovery_ms: resumed.map(|at| (at - self.killed_at_us) as f64 / 1000.0),
        })
    }
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
    fn faults_come_in_time_order_kill_first_at_one_instant() {
        let plan = ChaosPlan {
            kills_ms: vec![5_000, 20_000],
            restart: true,
            broker_restart_at_s: Some(5),
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
