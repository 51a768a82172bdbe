//! Crash injection (`--chaos kill-at=15s[,restart]`, planned in
//! [`crate::config::ChaosPlan`]): time how long until a killed product's
//! output flows again.

use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context, Result};
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::consumer::BaseConsumer;
use rdkafka::{ClientConfig, Offset};

use crate::broker::admin::assign_all;
use crate::clock::now_us;

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
