//! rustpipe, the in-house pipeline: consume, filter `eu-*`, derive
//! `latency_ratio` and `sla_status`, produce.
//!
//! It runs like any other product: a program of its own, which the suite
//! starts with BENCH_* variables and knows only through its product.yaml.
//! Records are processed in batches of up to 10k records or 10 ms.
//! At-least-once produces a batch, waits for its acks, then stores the offsets
//! for the next auto-commit; exactly-once wraps each batch's outputs and input
//! offsets in one Kafka transaction.

mod settings;
mod stateless;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::{BorrowedMessage, Message};
use rdkafka::producer::{BaseProducer, BaseRecord, DeliveryResult, Producer, ProducerContext};
use rdkafka::{ClientContext, Offset, TopicPartitionList};

use settings::{Delivery, PipelineSettings};

/// The line rustpipe prints once it owns its input partitions.
const READY_LINE: &str = "rustpipe ready";
const BATCH_MAX_RECORDS: usize = 10_000;
const BATCH_TIMEOUT: Duration = Duration::from_millis(10);
const TXN_TIMEOUT: Duration = Duration::from_secs(30);
/// Pause between looks at outstanding acknowledgements.
const ACK_POLL_PAUSE: Duration = Duration::from_micros(200);

/// Remembers the first failed delivery, so a lost record stops the pipeline.
#[derive(Default)]
struct DeliveryWatch {
    failed: std::sync::Mutex<Option<String>>,
}

struct WatchContext(Arc<DeliveryWatch>);

impl ClientContext for WatchContext {}

impl ProducerContext for WatchContext {
    type DeliveryOpaque = ();

    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        if let Err((err, _)) = result {
            if let Ok(mut failed) = self.0.failed.lock() {
                failed.get_or_insert_with(|| err.to_string());
            }
        }
    }
}

fn main() {
    if let Err(err) = run_from_env() {
        eprintln!("error: {err:#}");
        std::process::exit(1);
    }
}

/// Runs rustpipe with settings from the environment until SIGTERM or SIGINT.
fn run_from_env() -> Result<()> {
    let settings = PipelineSettings::from_env()?;
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(signal, stop.clone())?;
    }
    run(&settings, &stop)
}

fn run(settings: &PipelineSettings, stop: &AtomicBool) -> Result<()> {
    let (consumer_config, producer_config) =
        (settings.consumer_config(), settings.producer_config());
    println!(
        "{}",
        settings.effective_client_config(&consumer_config, &producer_config)
    );
    let consumer: BaseConsumer = consumer_config
        .create()
        .context("rustpipe: creating the consumer")?;
    let watch = Arc::new(DeliveryWatch::default());
    let producer: BaseProducer<WatchContext> = producer_config
        .create_with_context(WatchContext(watch.clone()))
        .context("rustpipe: creating the producer")?;
    if settings.delivery == Delivery::ExactlyOnce {
        producer
            .init_transactions(TXN_TIMEOUT)
            .context("rustpipe: initialising transactions")?;
    }
    consumer
        .subscribe(&[&settings.input_topic])
        .context("rustpipe: subscribing to the input topic")?;

    let mut ready = false;
    let mut batch: Vec<BorrowedMessage<'_>> = Vec::with_capacity(BATCH_MAX_RECORDS);
    let mut encoded = Vec::with_capacity(256);
    while !stop.load(Ordering::Relaxed) {
        // Fill one batch: up to BATCH_MAX_RECORDS, closing BATCH_TIMEOUT after
        // its first record.
        let mut opened: Option<Instant> = None;
        while batch.len() < BATCH_MAX_RECORDS {
            let wait = match opened {
                // Under a millisecond left: close the batch now, since the
                // client would busy-wait out a sub-millisecond timeout.
                Some(t) => match BATCH_TIMEOUT.checked_sub(t.elapsed()) {
                    Some(left) if left >= Duration::from_millis(1) => left,
                    _ => break,
                },
                None => Duration::from_millis(100),
            };
            let polled = consumer.poll(wait);
            if !ready && !consumer.assignment()?.elements().is_empty() {
                ready = true;
                println!("{READY_LINE}");
            }
            match polled {
                Some(Ok(message)) => {
                    opened.get_or_insert_with(Instant::now);
                    batch.push(message);
                }
                Some(Err(err)) => return Err(err).context("rustpipe: consuming"),
                None if opened.is_none() => break,
                None => {}
            }
        }
        if batch.is_empty() {
            continue;
        }
        let offsets = next_offsets(&batch)?;
        match settings.delivery {
            Delivery::AtLeastOnce => {
                produce_batch(&producer, settings, &batch, &mut encoded)?;
                wait_for_acks(&producer)?;
                check_deliveries(&watch)?;
                if !settings.options.never_commit {
                    consumer
                        .store_offsets(&offsets)
                        .context("rustpipe: storing offsets")?;
                }
            }
            Delivery::ExactlyOnce => {
                producer.begin_transaction()?;
                produce_batch(&producer, settings, &batch, &mut encoded)?;
                // Acked before the commit, whose own internal flush is slow
                // to notice deliveries (see wait_for_acks).
                wait_for_acks(&producer)?;
                let group = consumer
                    .group_metadata()
                    .context("rustpipe: no consumer group metadata")?;
                producer
                    .send_offsets_to_transaction(&offsets, &group, TXN_TIMEOUT)
                    .context("rustpipe: adding offsets to the transaction")?;
                producer
                    .commit_transaction(TXN_TIMEOUT)
                    .context("rustpipe: committing a transaction")?;
                check_deliveries(&watch)?;
            }
        }
        batch.clear();
    }
    if settings.delivery == Delivery::AtLeastOnce && !settings.options.never_commit {
        // The last stored offsets, committed before leaving.
        match consumer.commit_consumer_state(CommitMode::Sync) {
            Ok(())
            | Err(KafkaError::ConsumerCommit(rdkafka::types::RDKafkaErrorCode::NoOffset)) => {}
            Err(err) => return Err(err).context("rustpipe: final commit"),
        }
    }
    Ok(())
}

/// Transforms and sends every record of a batch.
fn produce_batch(
    producer: &BaseProducer<WatchContext>,
    settings: &PipelineSettings,
    batch: &[BorrowedMessage<'_>],
    encoded: &mut Vec<u8>,
) -> Result<()> {
    for message in batch {
        let Some(payload) = message.payload() else {
            continue;
        };
        burn_cpu(settings.options.work_us_per_record);
        encoded.clear();
        if !stateless::transform(payload, encoded, &settings.options)? {
            continue;
        }
        let mut record = BaseRecord::<[u8], [u8]>::to(&settings.output_topic).payload(&encoded[..]);
        if let Some(key) = message.key() {
            record = record.key(key);
        }
        loop {
            match producer.send(record) {
                Ok(()) => break,
                Err((
                    KafkaError::MessageProduction(rdkafka::types::RDKafkaErrorCode::QueueFull),
                    back,
                )) => {
                    record = back;
                    producer.poll(Duration::ZERO);
                    std::thread::sleep(ACK_POLL_PAUSE);
                }
                Err((err, _)) => return Err(err).context("rustpipe: producing"),
            }
        }
    }
    producer.poll(Duration::ZERO);
    Ok(())
}

/// Keeps the CPU busy for `us` microseconds (the `work_us_per_record` option).
fn burn_cpu(us: u64) {
    if us == 0 {
        return;
    }
    let until = Instant::now() + Duration::from_micros(us);
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

/// The offset to resume from for each partition of a batch: last + 1.
fn next_offsets(batch: &[BorrowedMessage<'_>]) -> Result<TopicPartitionList> {
    let mut offsets = TopicPartitionList::new();
    for message in batch {
        let next = Offset::Offset(message.offset() + 1);
        match offsets.find_partition(message.topic(), message.partition()) {
            Some(mut existing) => existing.set_offset(next)?,
            None => offsets.add_partition_offset(message.topic(), message.partition(), next)?,
        }
    }
    Ok(offsets)
}

/// Waits until every record sent so far is acknowledged.
///
/// Serves delivery reports without blocking and sleeps briefly between
/// looks: the client's `flush` (and so `commit_transaction`) was measured here
/// to take ~100 ms per call whatever the batch, and its `poll(timeout)` to
/// spin on the CPU for the whole timeout; either would dominate what is
/// measured.
fn wait_for_acks(producer: &BaseProducer<WatchContext>) -> Result<()> {
    let deadline = Instant::now() + TXN_TIMEOUT;
    loop {
        producer.poll(Duration::ZERO);
        if producer.in_flight_count() == 0 {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!(
                "rustpipe: records unacknowledged after {}s",
                TXN_TIMEOUT.as_secs()
            );
        }
        std::thread::sleep(ACK_POLL_PAUSE);
    }
}

fn check_deliveries(watch: &DeliveryWatch) -> Result<()> {
    if let Ok(failed) = watch.failed.lock() {
        if let Some(err) = failed.as_ref() {
            bail!("rustpipe: a record was not delivered: {err}");
        }
    }
    Ok(())
}
