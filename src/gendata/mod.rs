//! gendata: the deterministic, rate-controlled record generator.
//!
//! It runs as its own process (`suite gendata`) so its CPU is never charged to
//! the product. Records are produced on a fixed schedule and stamped with their
//! intended send time; how far behind schedule the sends fell is reported.

pub mod event;
pub mod schedule;

use std::time::Duration;

use anyhow::{Context, Result};
use hdrhistogram::Histogram;
use rdkafka::config::ClientConfig;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::producer::{BaseRecord, DeliveryResult, Producer, ProducerContext, ThreadedProducer};
use rdkafka::ClientContext;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::cli::GendataArgs;
use crate::clock::{now_us, sleep_until_us};
pub use event::Event;
use schedule::Schedule;

/// What gendata reports when it stops.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GendataSummary {
    /// Records handed to the producer.
    pub records_sent: u64,
    /// Records whose delivery the broker confirmed.
    pub records_acked: u64,
    /// Records the broker refused (a non-zero count fails the run).
    pub delivery_errors: u64,
    /// Records whose intended send time fell in the measurement window.
    pub window_records: u64,
    /// The first sequence number of the window (records before it are warm-up).
    pub window_first_seq: u64,
    /// records_sent / seconds from the schedule start to the last send.
    pub achieved_rate: f64,
    /// How late sends were against their slot, ms.
    pub behind_p99_ms: f64,
    pub behind_max_ms: f64,
}

/// Counts delivery reports without blocking the send loop.
#[derive(Default)]
struct DeliveryCounter {
    acked: AtomicU64,
    failed: AtomicU64,
}

struct CountingContext(Arc<DeliveryCounter>);

impl ClientContext for CountingContext {}

impl ProducerContext for CountingContext {
    type DeliveryOpaque = ();

    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        let counter = match result {
            Ok(_) => &self.0.acked,
            Err(_) => &self.0.failed,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// The producer settings gendata uses: batched, compressed like the topic.
fn producer_config(bootstrap: &str) -> ClientConfig {
    let mut config = ClientConfig::new();
    config
        .set("bootstrap.servers", bootstrap)
        .set("socket.nagle.disable", "true")
        .set("acks", "all")
        .set("enable.idempotence", "true")
        .set("linger.ms", "5")
        .set("compression.type", "lz4")
        .set("queue.buffering.max.messages", "1000000")
        .set("queue.buffering.max.kbytes", "1048576");
    config
}

/// Runs gendata until `end_us`, then prints or writes its summary.
pub fn run(args: &GendataArgs) -> Result<()> {
    let counter = Arc::new(DeliveryCounter::default());
    let producer: ThreadedProducer<CountingContext> = producer_config(&args.bootstrap)
        .create_with_context(CountingContext(counter.clone()))
        .context("gendata: creating the producer")?;
    let start_us = args.start_us.unwrap_or_else(now_us);
    let window_start_us = args.window_start_us.unwrap_or(start_us);
    let schedule = Schedule::new(start_us, args.rate);
    // 1 us .. 1 h, 3 significant digits.
    let mut behind = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3)?;
    let mut window_first_seq = None;
    let mut window_records = 0u64;
    let mut seq = 0u64;
    let mut payload = Vec::with_capacity(512);
    sleep_until_us(start_us);
    let mut last_send_us = start_us;
    'outer: loop {
        let now = now_us();
        if now >= args.end_us {
            break;
        }
        let due = schedule.due(now);
        while seq < due {
            let slot = if schedule.is_unpaced() {
                now_us()
            } else {
                schedule.slot_us(seq)
            };
            if slot >= args.end_us {
                break 'outer;
            }
            let event = Event::generate(args.seed, seq, slot);
            payload.clear();
            serde_json::to_writer(&mut payload, &event)?;
            send(&producer, &args.topic, &payload)?;
            last_send_us = now_us();
            behind.saturating_record((last_send_us - slot).max(1) as u64);
            if slot >= window_start_us {
                window_first_seq.get_or_insert(seq);
                window_records += 1;
            }
            seq += 1;
            if schedule.is_unpaced() && seq.is_multiple_of(1024) {
                continue 'outer;
            }
        }
        if !schedule.is_unpaced() {
            sleep_until_us(schedule.slot_us(seq).min(args.end_us));
        }
    }
    producer
        .flush(Duration::from_secs(30))
        .context("gendata: flushing the last records")?;
    let elapsed_s = ((last_send_us - start_us).max(1)) as f64 / 1e6;
    let summary = GendataSummary {
        records_sent: seq,
        records_acked: counter.acked.load(Ordering::Relaxed),
        delivery_errors: counter.failed.load(Ordering::Relaxed),
        window_records,
        window_first_seq: window_first_seq.unwrap_or(seq),
        achieved_rate: seq as f64 / elapsed_s,
        behind_p99_ms: behind.value_at_quantile(0.99) as f64 / 1000.0,
        behind_max_ms: behind.max() as f64 / 1000.0,
    };
    crate::handoff::write(args.summary.as_deref(), &summary)
}

/// Sends one record, waiting for room when the producer's queue is full.
fn send(producer: &ThreadedProducer<CountingContext>, topic: &str, payload: &[u8]) -> Result<()> {
    loop {
        match producer.send(BaseRecord::<(), [u8]>::to(topic).payload(payload)) {
            Ok(()) => return Ok(()),
            Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), _)) => {
                std::thread::sleep(Duration::from_millis(1));
            }
            Err((err, _)) => return Err(err).context("gendata: producing a record"),
        }
    }
}
