//! The verify phase: once everything has stopped, read the run's whole output
//! topic read_committed from the start and hand each record to the verifier.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::consumer::BaseConsumer;
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::{ClientConfig, Offset};

use crate::broker::admin::assign_all;
use crate::interrupt::{Interrupt, Interrupted};
use crate::workloads::OutputVerifier;

/// How long the output may yield nothing at all before the read gives up.
const STALL_LIMIT: Duration = Duration::from_secs(30);

/// Reads every committed record of `topic` into `verifier`, up to the end
/// (the last stable offset, for read_committed) of each partition.
pub fn read_output(
    bootstrap: &str,
    topic: &str,
    verifier: &mut dyn OutputVerifier,
    interrupt: &Interrupt,
) -> Result<()> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", format!("{topic}-verify"))
        .set("enable.auto.commit", "false")
        .set("isolation.level", "read_committed")
        .set("enable.partition.eof", "true")
        .set("fetch.wait.max.ms", "100")
        .set("max.partition.fetch.bytes", "52428800")
        .set_log_level(RDKafkaLogLevel::Critical)
        .create()
        .context("verification: creating the consumer")?;
    let partitions = assign_all(&consumer, &[topic], Offset::Beginning).context("verification")?;
    let mut at_end = BTreeSet::new();
    let mut last_progress = Instant::now();
    while at_end.len() < partitions {
        if interrupt.is_set() {
            return Err(Interrupted.into());
        }
        match consumer.poll(Duration::from_millis(100)) {
            Some(Ok(message)) => {
                verifier.observe(message.payload().unwrap_or_default());
                at_end.remove(&message.partition());
                last_progress = Instant::now();
            }
            Some(Err(KafkaError::PartitionEOF(partition))) => {
                at_end.insert(partition);
                last_progress = Instant::now();
            }
            Some(Err(err)) => return Err(err).context("verification: reading the output"),
            None if last_progress.elapsed() > STALL_LIMIT => bail!(
                "verification: the output topic {topic} yielded nothing for {}s short of its end",
                STALL_LIMIT.as_secs()
            ),
            None => {}
        }
    }
    Ok(())
}
