//! The latency probe: a read_committed consumer tailing the output topic.
//!
//! latency = the probe's wall-clock arrival time - the record's gendata
//! timestamp (its intended send time), on one host and one clock. Only
//! arrivals inside the measurement window are counted.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use base64::Engine;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};
use serde::{Deserialize, Serialize};

use crate::cli::ProbeArgs;
use crate::clock::now_us;

/// The line the probe prints once it reads the output topic.
pub const READY_LINE: &str = "probe ready";

/// The two fields the probe reads of every output record.
#[derive(Deserialize)]
struct Stamp {
    ts_us: i64,
}

/// Latency percentiles of the records that arrived in the window.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProbeSummary {
    /// Records that arrived in the window.
    pub count: u64,
    /// Records without a readable `ts_us` (counted, not timed).
    pub unreadable: u64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
    /// The whole histogram (microseconds), HdrHistogram V2 + deflate, base64.
    pub histogram: String,
}

/// A latency histogram in microseconds, 3 significant digits.
pub fn new_histogram() -> Histogram<u64> {
    let mut histogram = Histogram::new(3).expect("3 significant digits is valid");
    histogram.auto(true);
    histogram
}

impl ProbeSummary {
    /// Percentiles of `histogram` (microseconds) in milliseconds.
    pub fn from_histogram(histogram: &Histogram<u64>, unreadable: u64) -> Result<ProbeSummary> {
        let ms = |q: f64| histogram.value_at_quantile(q) as f64 / 1000.0;
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(histogram, &mut bytes)
            .context("probe: serializing the histogram")?;
        Ok(ProbeSummary {
            count: histogram.len(),
            unreadable,
            p50_ms: ms(0.5),
            p90_ms: ms(0.9),
            p99_ms: ms(0.99),
            p999_ms: ms(0.999),
            max_ms: histogram.max() as f64 / 1000.0,
            histogram: base64::engine::general_purpose::STANDARD.encode(bytes),
        })
    }
}

/// Consumer settings shared by everything that reads like the probe.
pub fn consumer_config(bootstrap: &str, group: &str) -> ClientConfig {
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

/// Runs the probe until the window ends, then prints or writes its summary.
pub fn run(args: &ProbeArgs) -> Result<()> {
    let consumer: BaseConsumer = consumer_config(&args.bootstrap, &format!("{}-probe", args.topic))
        .create()
        .context("probe: creating the consumer")?;
    let metadata = consumer
        .fetch_metadata(Some(&args.topic), Duration::from_secs(10))
        .context("probe: reading the output topic's metadata")?;
    let partitions = metadata
        .topics()
        .first()
        .map(|t| t.partitions().len())
        .unwrap_or(0);
    if partitions == 0 {
        bail!("probe: topic {} has no partitions", args.topic);
    }
    let mut assignment = TopicPartitionList::new();
    for partition in 0..partitions as i32 {
        assignment.add_partition_offset(&args.topic, partition, Offset::Beginning)?;
    }
    consumer.assign(&assignment)?;
    println!("{READY_LINE}");

    let mut histogram = new_histogram();
    let mut unreadable = 0u64;
    loop {
        let polled = consumer.poll(Duration::from_millis(50));
        let arrival = now_us();
        if arrival >= args.window_end_us {
            break;
        }
        let Some(message) = polled else { continue };
        let message = message.context("probe: reading the output topic")?;
        if arrival < args.window_start_us {
            continue;
        }
        match message
            .payload()
            .and_then(|p| serde_json::from_slice::<Stamp>(p).ok())
        {
            Some(stamp) => histogram.record((arrival - stamp.ts_us).max(1) as u64)?,
            None => unreadable += 1,
        }
    }
    let summary = ProbeSummary::from_histogram(&histogram, unreadable)?;
    crate::handoff::write(args.summary.as_deref(), &summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::Deserializer;

    #[test]
    fn summary_reports_percentiles_in_ms_and_keeps_the_histogram() {
        let mut h = new_histogram();
        for us in 1..=1000u64 {
            h.record(us * 1000).unwrap();
        }
        let s = ProbeSummary::from_histogram(&h, 2).unwrap();
        assert_eq!(s.count, 1000);
        assert_eq!(s.unreadable, 2);
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
}
