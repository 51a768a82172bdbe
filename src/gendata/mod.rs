//! gendata: the deterministic, rate-controlled record generator.
//!
//! It runs as its own process (`suite gendata`) so its CPU is never charged to
//! the product. Records are produced on a fixed schedule and stamped with their
//! intended send time; how late the broker acknowledged them against that time
//! is reported.

pub mod avro;
pub mod event;
mod keys;
pub mod schedule;

use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::{Context, Result};
use hdrhistogram::Histogram;
use rdkafka::config::ClientConfig;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::producer::{BaseRecord, DeliveryResult, Producer, ProducerContext, ThreadedProducer};
use rdkafka::ClientContext;

use crate::clock::{now_us, sleep_until_us};
use crate::handoff::{WindowAnnouncement, WindowSource, WindowWatch};
pub use crate::model::gendata::GendataSummary;
pub use event::Event;
use keys::event_key;
pub use keys::KeyPartitions;
use schedule::Pacing;

/// What one gendata process is to do.
#[derive(Debug, Clone, PartialEq)]
pub struct GendataPlan {
    /// The broker's bootstrap address.
    pub bootstrap: String,
    /// The topic records are written to.
    pub topic: String,
    /// Records per second; 0 = as fast as possible.
    pub rate: u64,
    /// The seed of the deterministic record model.
    pub seed: u64,
    /// When the schedule starts, epoch microseconds.
    pub start_us: i64,
    /// Where the measurement window starts, epoch microseconds (not used
    /// when `window_file` is given).
    pub window_start_us: i64,
    /// When to stop, epoch microseconds; with `window_file`, a bound never
    /// run past, while the file's end is when to stop.
    pub end_us: i64,
    /// The window is announced at run time in this file
    /// ([`crate::handoff::announce`]): until it appears no record is a
    /// window record; then the file's bounds are the window's.
    pub window_file: Option<PathBuf>,
    /// Stop after this many records as well (sequence numbers `0..n`): a
    /// drain run's pre-fill.
    pub max_records: Option<u64>,
    /// Where the summary goes as JSON (standard output when `None`).
    pub summary: Option<PathBuf>,
    /// Avro batch datums of this many events per message, in place of one
    /// JSON event per message.
    pub avro_events: Option<u32>,
    /// The input topic's partitions. On more than one, each JSON event is
    /// keyed by its (region, service) and written to that key's partition
    /// ([`KeyPartitions`]); on one, it goes without a key, as it always did.
    pub partitions: u32,
}

impl GendataPlan {
    /// The `suite gendata` arguments that carry out this plan, for the
    /// orchestrator to start gendata as a process of its own.
    pub fn command_args(&self) -> Vec<String> {
        let mut args: Vec<String> = [
            "gendata",
            "--bootstrap",
            &self.bootstrap,
            "--topic",
            &self.topic,
        ]
        .map(str::to_string)
        .to_vec();
        for (flag, value) in [
            ("--rate", self.rate.to_string()),
            ("--seed", self.seed.to_string()),
            ("--start-us", self.start_us.to_string()),
            ("--end-us", self.end_us.to_string()),
        ] {
            args.extend([flag.to_string(), value]);
        }
        match &self.window_file {
            Some(file) => args.extend([
                "--window-file".to_string(),
                file.to_string_lossy().into_owned(),
            ]),
            None => args.extend([
                "--window-start-us".to_string(),
                self.window_start_us.to_string(),
            ]),
        }
        if let Some(records) = self.max_records {
            args.extend(["--max-records".to_string(), records.to_string()]);
        }
        if let Some(events) = self.avro_events {
            args.extend(["--avro-events".to_string(), events.to_string()]);
        }
        if self.partitions > 1 {
            args.extend(["--partitions".to_string(), self.partitions.to_string()]);
        }
        if let Some(summary) = &self.summary {
            args.extend([
                "--summary".to_string(),
                summary.to_string_lossy().into_owned(),
            ]);
        }
        args
    }
}

/// A record's slot, carried to its delivery report as the delivery opaque:
/// microseconds from the schedule's start, so no record needs an allocation.
fn slot_opaque(start_us: i64, slot_us: i64) -> usize {
    // Slots never precede the start: the first send waits for it.
    (slot_us - start_us).max(0) as usize
}

/// The slot, epoch microseconds, that [`slot_opaque`] encoded.
fn slot_from_opaque(start_us: i64, opaque: usize) -> i64 {
    start_us + opaque as i64
}

/// The lateness to record, in microseconds, of a record acknowledged at
/// `ack_us`: only window records count, and at least 1 us (the histogram's floor).
fn window_lateness_us(slot_us: i64, ack_us: i64, window_start_us: i64) -> Option<u64> {
    (slot_us >= window_start_us).then(|| (ack_us - slot_us).max(1) as u64)
}

/// Delivery reports: counts, and the lateness of window records.
struct DeliveryTally {
    start_us: i64,
    /// `i64::MAX` until the window is known: no record is a window record.
    window_start_us: AtomicI64,
    acked: AtomicU64,
    failed: AtomicU64,
    /// Lateness in microseconds; locked once per acknowledgement by the thread
    /// serving delivery reports (the producer's poll thread, or the main
    /// thread while it flushes), so the lock is hardly ever contended.
    lateness: Mutex<Histogram<u64>>,
}

impl DeliveryTally {
    fn new(start_us: i64) -> DeliveryTally {
        DeliveryTally {
            start_us,
            window_start_us: AtomicI64::new(i64::MAX),
            acked: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            lateness: Mutex::new(messages::histogram::latency_us()),
        }
    }

    fn lateness(&self) -> std::sync::MutexGuard<'_, Histogram<u64>> {
        // Recording cannot panic, so a poisoned lock still holds a whole histogram.
        self.lateness.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

struct TallyContext(Arc<DeliveryTally>);

impl ClientContext for TallyContext {}

impl ProducerContext for TallyContext {
    type DeliveryOpaque = usize;

    fn delivery(&self, result: &DeliveryResult<'_>, slot: usize) {
        let tally = &self.0;
        if result.is_err() {
            // A refused record has no acknowledgement to time.
            tally.failed.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let ack_us = now_us();
        tally.acked.fetch_add(1, Ordering::Relaxed);
        let slot_us = slot_from_opaque(tally.start_us, slot);
        let window_start_us = tally.window_start_us.load(Ordering::Relaxed);
        if let Some(late) = window_lateness_us(slot_us, ack_us, window_start_us) {
            tally.lateness().saturating_record(late);
        }
    }
}

/// gendata's linger, in librdkafka's terms (ms); the probe's floor
/// producer uses the same.
pub const GENDATA_LINGER_MS: &str = "1";

/// The producer settings gendata uses: batched, compressed like the topic.
/// Its 1 ms linger matches the floor producer's (see the probe), so the
/// floor's share of the broker path is gendata's within a millisecond. A
/// record may wait 5 min for the broker (a broker restart mid-run): the
/// idempotent producer then sends it, in order, with no gap in the input.
fn producer_config(bootstrap: &str) -> ClientConfig {
    let mut config = ClientConfig::new();
    config
        .set("bootstrap.servers", bootstrap)
        .set("socket.nagle.disable", "true")
        .set("acks", "all")
        .set("enable.idempotence", "true")
        .set("linger.ms", GENDATA_LINGER_MS)
        .set("compression.type", "lz4")
        .set("queue.buffering.max.messages", "1000000")
        .set("queue.buffering.max.kbytes", "1048576")
        .set("message.timeout.ms", "300000");
    config
}

/// Records to have sent by now: the schedule's `due`, capped at the plan's limit.
fn due_within_limit(due: u64, max_records: Option<u64>) -> u64 {
    max_records.map_or(due, |limit| due.min(limit))
}

/// The records sent with their slot in the window, once the window is
/// known; and when to stop.
#[derive(Debug, Clone, PartialEq)]
struct WindowAccount {
    /// The plan's end: never run past it.
    bound_us: i64,
    window: Option<WindowAnnouncement>,
    first_seq: Option<u64>,
    records: u64,
}

impl WindowAccount {
    fn new(bound_us: i64) -> WindowAccount {
        WindowAccount {
            bound_us,
            window: None,
            first_seq: None,
            records: 0,
        }
    }

    /// The window is known from now on.
    fn learn(&mut self, window: WindowAnnouncement) {
        self.window = Some(window);
    }

    /// When to stop: the window's end, within the plan's bound.
    fn stop_us(&self) -> i64 {
        self.window
            .map_or(self.bound_us, |w| w.end_us.min(self.bound_us))
    }

    /// Record `seq`, due at `slot_us`, went out.
    fn sent(&mut self, seq: u64, slot_us: i64) {
        if self.window.is_some_and(|w| slot_us >= w.start_us) {
            self.first_seq.get_or_insert(seq);
            self.records += 1;
        }
    }
}

/// Runs gendata until its window's end (or its record limit), then prints
/// or writes its summary.
pub fn run(plan: &GendataPlan) -> Result<()> {
    let tally = Arc::new(DeliveryTally::new(plan.start_us));
    let producer: ThreadedProducer<TallyContext> = producer_config(&plan.bootstrap)
        .create_with_context(TallyContext(tally.clone()))
        .context("gendata: creating the producer")?;
    let pacing = Pacing::new(plan.start_us, plan.rate);
    let mut watch = WindowWatch::new(match &plan.window_file {
        Some(file) => WindowSource::Announced(file.clone()),
        None => WindowSource::Fixed(WindowAnnouncement {
            start_us: plan.window_start_us,
            end_us: plan.end_us,
        }),
    });
    let mut account = WindowAccount::new(plan.end_us);
    let mut seq = 0u64;
    let mut payload = Vec::with_capacity(512);
    let mut avro = plan.avro_events.map(avro::AvroEncoder::new);
    let keys = KeyPartitions::new(plan.partitions);
    sleep_until_us(plan.start_us);
    let mut last_send_us = plan.start_us;
    'outer: loop {
        let now = now_us();
        if account.window.is_none() {
            look_for_window(&mut watch, &mut account, &tally, now)?;
        }
        let stop_us = account.stop_us();
        if now >= stop_us {
            break;
        }
        let due = match pacing {
            Pacing::Paced(schedule) => schedule.due(now),
            Pacing::Unpaced => u64::MAX,
        };
        let due = due_within_limit(due, plan.max_records);
        while seq < due {
            let slot = match pacing {
                Pacing::Paced(schedule) => schedule.slot_us(seq),
                Pacing::Unpaced => now_us(),
            };
            if slot >= stop_us {
                break 'outer;
            }
            let stamp = encode(plan, &keys, avro.as_mut(), seq, slot, &mut payload)?;
            let opaque = slot_opaque(plan.start_us, slot);
            send(&producer, &plan.topic, &payload, &stamp, opaque)?;
            last_send_us = now_us();
            account.sent(seq, slot);
            seq += 1;
            if pacing == Pacing::Unpaced && seq.is_multiple_of(1024) {
                continue 'outer;
            }
        }
        if plan.max_records.is_some_and(|limit| seq >= limit) {
            break;
        }
        if let Pacing::Paced(schedule) = pacing {
            // Until the window is known, wake to look for its file too.
            sleep_until_us(schedule.slot_us(seq).min(stop_us).min(watch.next_look_us()));
        }
    }
    producer
        .flush(Duration::from_secs(30))
        .context("gendata: flushing the last records")?;
    let elapsed_s = ((last_send_us - plan.start_us).max(1)) as f64 / 1e6;
    // Flushed: every delivery report has arrived, so the lock is free.
    let lateness = tally.lateness();
    let summary = GendataSummary {
        records_sent: seq,
        records_acked: tally.acked.load(Ordering::Relaxed),
        delivery_errors: tally.failed.load(Ordering::Relaxed),
        window_records: account.records,
        window_first_seq: account.first_seq.unwrap_or(seq),
        achieved_rate: seq as f64 / elapsed_s,
        behind_p99_ms: lateness.value_at_quantile(0.99) as f64 / 1000.0,
        behind_max_ms: lateness.max() as f64 / 1000.0,
        behind_count: lateness.len(),
    };
    crate::handoff::write(plan.summary.as_deref(), &summary)
}

/// Learns the window once its announcement is there: from then on records
/// are counted in it and their lateness timed.
fn look_for_window(
    watch: &mut WindowWatch,
    account: &mut WindowAccount,
    tally: &DeliveryTally,
    now: i64,
) -> Result<()> {
    if let Some(window) = watch.poll(now)? {
        if now > window.start_us {
            eprintln!(
                "gendata: the window was announced {} ms after its start; \
                 records sent before then are not counted in it",
                (now - window.start_us) / 1000
            );
        }
        tally
            .window_start_us
            .store(window.start_us, Ordering::Relaxed);
        account.learn(window);
    }
    Ok(())
}

/// Writes record `seq`, due at `slot`, into `payload`: an Avro batch datum
/// with its stamp, or the event's JSON (with its key and partition on a
/// topic of several).
fn encode(
    plan: &GendataPlan,
    keys: &KeyPartitions,
    avro: Option<&mut avro::AvroEncoder>,
    seq: u64,
    slot: i64,
    payload: &mut Vec<u8>,
) -> Result<Stamp> {
    match avro {
        Some(encoder) => {
            encoder.encode(plan.seed, seq, slot, payload)?;
            Ok(Stamp::Avro(AvroStamp::of(seq, slot)))
        }
        None => {
            payload.clear();
            let event = event::generate(plan.seed, seq, slot);
            serde_json::to_writer(&mut *payload, &event)?;
            if plan.partitions <= 1 {
                return Ok(Stamp::None);
            }
            let key = event_key(event.region.as_ref(), event.service.as_ref());
            let partition = keys.of_seq(plan.seed, seq);
            Ok(Stamp::Keyed { key, partition })
        }
    }
}

/// What a message carries besides its payload.
enum Stamp {
    /// Nothing: a JSON event on a topic of one partition.
    None,
    /// A JSON event's key and the partition it hashes to.
    Keyed {
        key: String,
        partition: i32,
    },
    Avro(AvroStamp),
}

/// What an Avro message carries besides its datum, so that a product can
/// pass it through undecoded and still be checked: its sequence number as
/// the key (8 bytes, big-endian) and its slot as the message timestamp.
struct AvroStamp {
    key: [u8; 8],
    timestamp_ms: i64,
}

impl AvroStamp {
    fn of(message_seq: u64, slot_us: i64) -> AvroStamp {
        AvroStamp {
            key: message_seq.to_be_bytes(),
            timestamp_ms: slot_us.div_euclid(1000),
        }
    }
}

/// Sends one record, waiting for room when the producer's queue is full.
fn send(
    producer: &ThreadedProducer<TallyContext>,
    topic: &str,
    payload: &[u8],
    stamp: &Stamp,
    slot: usize,
) -> Result<()> {
    loop {
        let mut record =
            BaseRecord::<[u8], [u8], usize>::with_opaque_to(topic, slot).payload(payload);
        match stamp {
            Stamp::None => {}
            Stamp::Keyed { key, partition } => {
                record = record.key(key.as_bytes()).partition(*partition);
            }
            Stamp::Avro(stamp) => {
                record = record.key(&stamp.key[..]).timestamp(stamp.timestamp_ms);
            }
        }
        match producer.send(record) {
            Ok(()) => return Ok(()),
            Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), _)) => {
                std::thread::sleep(Duration::from_millis(1));
            }
            Err((err, _)) => return Err(err).context("gendata: producing a record"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slot_survives_the_delivery_opaque() {
        let start = 1_700_000_000_000_000;
        for slot in [start, start + 1, start + 200, start + 3_600_000_000] {
            assert_eq!(slot_from_opaque(start, slot_opaque(start, slot)), slot);
        }
    }

    #[test]
    fn the_record_limit_caps_what_is_due() {
        assert_eq!(due_within_limit(u64::MAX, Some(200_000)), 200_000);
        assert_eq!(due_within_limit(150, Some(200_000)), 150);
        assert_eq!(due_within_limit(u64::MAX, None), u64::MAX);
        assert_eq!(due_within_limit(0, Some(0)), 0);
    }

    #[test]
    fn lateness_counts_window_records_only() {
        let window_start = 10_000_000;
        assert_eq!(
            window_lateness_us(9_999_999, 10_005_000, window_start),
            None
        );
        assert_eq!(
            window_lateness_us(10_000_000, 10_004_500, window_start),
            Some(4_500)
        );
        assert_eq!(
            window_lateness_us(12_000_000, 12_000_250, window_start),
            Some(250)
        );
    }

    /// A window announced at run time: records sent before it is known
    /// never count, those due in it do, and gendata stops at its end, never
    /// past the plan's bound.
    #[test]
    fn a_late_announced_window_counts_its_own_records_and_ends_gendata() {
        let schedule = schedule::Schedule::new(1_000_000, 10);
        let mut account = WindowAccount::new(60_000_000);
        assert_eq!(account.stop_us(), 60_000_000);
        // warm-up: 3 s of records, the window not yet known
        for seq in 0..30 {
            account.sent(seq, schedule.slot_us(seq));
        }
        assert_eq!((account.records, account.first_seq), (0, None));
        account.learn(WindowAnnouncement {
            start_us: 5_000_000,
            end_us: 9_000_000,
        });
        assert_eq!(account.stop_us(), 9_000_000);
        let mut seq = 30;
        while schedule.slot_us(seq) < account.stop_us() {
            account.sent(seq, schedule.slot_us(seq));
            seq += 1;
        }
        // slots 4.0 s .. 8.9 s went out; 5.0 s .. 8.9 s are the window's
        assert_eq!(seq, 80);
        assert_eq!((account.records, account.first_seq), (40, Some(40)));
        // an announced end past the plan's bound stops at the bound
        let mut bounded = WindowAccount::new(7_000_000);
        bounded.learn(WindowAnnouncement {
            start_us: 5_000_000,
            end_us: 9_000_000,
        });
        assert_eq!(bounded.stop_us(), 7_000_000);
    }

    #[test]
    fn an_acknowledgement_at_or_before_the_slot_counts_as_one_microsecond() {
        assert_eq!(window_lateness_us(5_000, 5_000, 0), Some(1));
        assert_eq!(window_lateness_us(5_000, 4_990, 0), Some(1));
    }
}
