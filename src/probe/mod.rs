//! The latency probe: a read_committed consumer tailing the output topic.
//!
//! latency = the probe's wall-clock arrival time - the record's gendata
//! timestamp (its intended send time), on one host and one clock. Only
//! arrivals inside the measurement window are counted.
//!
//! The same process measures the setup floor: a producer writes one small
//! record every 10 ms (acks=all, linger 5 ms) to the run's floor topic, and the
//! same consumer reads it back. What the broker alone costs, every product
//! inherits; `added` = product - floor is the product's own part.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use base64::Engine;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::BaseConsumer;
use rdkafka::message::Message;
use rdkafka::producer::{BaseRecord, Producer, ThreadedProducer};
use rdkafka::Offset;
use serde::{Deserialize, Serialize};

use crate::broker::admin::assign_all;
use crate::cli::ProbeArgs;
use crate::clock::{now_us, sleep_until_us};

/// The line the probe prints once it reads its topics.
pub const READY_LINE: &str = "probe ready";
/// One floor record every 10 ms.
const FLOOR_PERIOD_US: i64 = 10_000;

/// The field the probe reads of every record.
#[derive(Deserialize)]
struct Stamp {
    ts_us: i64,
}

/// Percentiles of one histogram, in milliseconds, with the histogram itself.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Records that arrived in the window.
    pub count: u64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
    /// The whole histogram (microseconds), HdrHistogram V2 + deflate, base64.
    pub histogram: String,
}

/// What the probe reports: the product's latency and the setup floor.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProbeSummary {
    pub output: LatencySummary,
    pub floor: LatencySummary,
    /// Output records without a readable `ts_us` (counted, not timed).
    pub unreadable: u64,
}

/// A latency histogram in microseconds, 3 significant digits.
pub fn new_histogram() -> Histogram<u64> {
    let mut histogram = Histogram::new(3).expect("3 significant digits is valid");
    histogram.auto(true);
    histogram
}

impl LatencySummary {
    /// Percentiles of `histogram` (microseconds) in milliseconds.
    pub fn from_histogram(histogram: &Histogram<u64>) -> Result<LatencySummary> {
        let ms = |q: f64| histogram.value_at_quantile(q) as f64 / 1000.0;
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(histogram, &mut bytes)
            .context("probe: serializing a histogram")?;
        Ok(LatencySummary {
            count: histogram.len(),
            p50_ms: ms(0.5),
            p90_ms: ms(0.9),
            p99_ms: ms(0.99),
            p999_ms: ms(0.999),
            max_ms: histogram.max() as f64 / 1000.0,
            histogram: base64::engine::general_purpose::STANDARD.encode(bytes),
        })
    }
}

/// Consumer settings of the probe: read_committed, fetches answered within 10 ms.
fn consumer_config(bootstrap: &str, group: &str) -> ClientConfig {
    let mut config = ClientConfig::new();
    config
        .set("bootstrap.servers", bootstrap)
        .set("socket.nagle.disable", "true")
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .set("isolation.level", "read_committed")
        .set("fetch.wait.max.ms", "10")
        .set("fetch.min.bytes", "1")
        .set("auto.offset.reset", "earliest");
    config
}

/// Writes one small record every 10 ms to `topic` until `stop`.
fn write_floor(bootstrap: &str, topic: &str, stop: &AtomicBool) -> Result<()> {
    let producer: ThreadedProducer<_> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("socket.nagle.disable", "true")
        .set("acks", "all")
        .set("linger.ms", "5")
        .create()
        .context("probe: creating the floor producer")?;
    let mut slot = now_us();
    while !stop.load(Ordering::Relaxed) {
        sleep_until_us(slot);
        let payload = format!("{{\"ts_us\":{slot}}}");
        // A full queue here would mean the broker is gone; the record is skipped.
        let _ = producer.send(BaseRecord::<(), str>::to(topic).payload(&payload));
        slot += FLOOR_PERIOD_US;
    }
    producer.flush(Duration::from_secs(5))?;
    Ok(())
}

/// Runs the probe until the window ends, then prints or writes its summary.
pub fn run(args: &ProbeArgs) -> Result<()> {
    let consumer: BaseConsumer = consumer_config(&args.bootstrap, &format!("{}-probe", args.topic))
        .create()
        .context("probe: creating the consumer")?;
    assign_all(
        &consumer,
        &[&args.topic, &args.floor_topic],
        Offset::Beginning,
    )
    .context("probe")?;
    let stop = Arc::new(AtomicBool::new(false));
    let floor_writer = {
        let (bootstrap, topic, stop) = (
            args.bootstrap.clone(),
            args.floor_topic.clone(),
            stop.clone(),
        );
        std::thread::spawn(move || write_floor(&bootstrap, &topic, &stop))
    };
    println!("{READY_LINE}");

    let mut output = new_histogram();
    let mut floor = new_histogram();
    let mut unreadable = 0u64;
    let consumed = loop {
        let polled = consumer.poll(Duration::from_millis(50));
        let arrival = now_us();
        if arrival >= args.window_end_us {
            break Ok(());
        }
        let Some(message) = polled else { continue };
        let message = match message {
            Ok(message) => message,
            Err(err) => break Err(err).context("probe: reading"),
        };
        if arrival < args.window_start_us {
            continue;
        }
        let is_floor = message.topic() == args.floor_topic;
        let stamp = message
            .payload()
            .and_then(|p| serde_json::from_slice::<Stamp>(p).ok());
        match (stamp, is_floor) {
            (Some(stamp), false) => output.record((arrival - stamp.ts_us).max(1) as u64)?,
            (Some(stamp), true) => floor.record((arrival - stamp.ts_us).max(1) as u64)?,
            (None, false) => unreadable += 1,
            (None, true) => {}
        }
    };
    stop.store(true, Ordering::Relaxed);
    let floor_result = floor_writer
        .join()
        .map_err(|_| anyhow::anyhow!("probe: the floor writer panicked"))?;
    consumed?;
    floor_result?;
    let summary = ProbeSummary {
        output: LatencySummary::from_histogram(&output)?,
        floor: LatencySummary::from_histogram(&floor)?,
        unreadable,
    };
    crate::handoff::write(args.summary.as_deref(), &summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::Deserializer;

    #[test]
    fn summary_reports_percentiles_in_ms_and_keeps_the_histogram() {
        let mut h = new_histogram();
        for ms in 1..=1000u64 {
            h.record(ms * 1000).unwrap();
        }
        let s = LatencySummary::from_histogram(&h).unwrap();
        assert_eq!(s.count, 1000);
        assert!((s.p50_ms - 500.0).abs() < 1.0, "{}", s.p50_ms);
        assert!((s.p99_ms - 990.0).abs() < 1.0, "{}", s.p99_ms);
        assert!((s.max_ms - 1000.0).abs() < 1.0, "{}", s.max_ms);
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&s.histogram)
            .unwrap();
        let back: Histogram<u64> = Deserializer::new().deserialize(&mut &bytes[..]).unwrap();
        assert_eq!(back.len(), 1000);
        assert_eq!(back.value_at_quantile(0.5), h.value_at_quantile(0.5));
    }

    #[test]
    fn an_empty_histogram_summarises_to_zero() {
        let s = LatencySummary::from_histogram(&new_histogram()).unwrap();
        assert_eq!((s.count, s.p50_ms, s.max_ms), (0, 0.0, 0.0));
    }
}
