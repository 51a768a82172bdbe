//! The latency probe: a read_committed consumer tailing the output topic.
//!
//! latency = the probe's wall-clock arrival time - the time the record was
//! due, on one host and one clock: its gendata timestamp (intended send
//! time) for a per-record workload, a pane's window end for a windowed one.
//! Only arrivals inside the measurement window are counted.
//!
//! The same process measures the setup floor: a producer writes one small
//! record every 10 ms (acks=all, gendata's 1 ms linger) to the run's floor
//! topic, and the same consumer reads it back. What the broker alone costs,
//! every product inherits; `added` = product - floor is the product's own
//! part. A floor record, alone in its batch, waits the whole linger, where a
//! gendata record waits what is left of its batch's: the floor is high by up
//! to the linger, about half of it at p50, which is why the linger is short.
//!
//! The probe also checks itself: about every 100 ms of the window it compares
//! its own position with the output's end, so a run where the probe, not the
//! product, fell behind can be told apart.
//!
//! Latency over time: beside the window's histogram, the probe keeps one per
//! sample interval (anchored at the window's start), summarised as each
//! interval closes, so a product that stops now and then shows when.
//!
//! The window is given on the command line, or announced at run time in a
//! window file (`crate::handoff`): until it appears, nothing is measured.

mod lag;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};

use hdrhistogram::Histogram;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{BorrowedMessage, Message};
use rdkafka::producer::{BaseRecord, Producer, ThreadedProducer};
use rdkafka::Offset;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};

use crate::broker::admin::{assign_all, recoverable};
use crate::clock::{now_us, sleep_until_us};
use crate::handoff::{WindowAnnouncement, WindowSource, WindowWatch};
pub use crate::model::probe::{LatencySummary, ProbeLag, ProbeSummary, PROBE_BEHIND_LIMIT_MS};
use crate::results::LatencySeries;
use crate::stats;
use lag::{LagTally, OutputEnds};

/// The line the probe prints once it reads its topics.
pub const READY_LINE: &str = "probe ready";
/// One floor record every 10 ms.
const FLOOR_PERIOD_US: i64 = 10_000;
/// The broker answers the probe's fetches within 10 ms, data or not.
const FETCH_WAIT_MS: u64 = 10;

/// What one probe process is to do.
#[derive(Debug, Clone)]
pub struct ProbePlan {
    /// The broker's bootstrap address.
    pub bootstrap: String,
    /// The output topic of the product under test.
    pub topic: String,
    /// The probe's own topic for the setup floor.
    pub floor_topic: String,
    /// Where arrivals are measured: from the window's start on, until its
    /// end, when the probe exits; known at start, or announced in a file.
    pub window: WindowSource,
    /// The length of the intervals latency over time is kept for, µs.
    pub interval_us: i64,
    /// The output records' field holding when each was due, epoch µs.
    pub stamp_field: String,
    /// Where the summary goes as JSON (standard output when `None`).
    pub summary: Option<PathBuf>,
}

/// The field floor records are stamped in.
const FLOOR_STAMP: &str = "ts_us";

/// Reads one integer field of a JSON object and skips the rest unparsed, so
/// the probe's cost does not grow with the record.
struct StampOf<'f>(&'f str);

impl<'de> DeserializeSeed<'de> for StampOf<'_> {
    type Value = Option<i64>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<i64>, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for StampOf<'_> {
    type Value = Option<i64>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a JSON object with an integer `{}`", self.0)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<i64>, A::Error> {
        let mut stamp = None;
        while let Some(is_stamp) = map.next_key_seed(IsField(self.0))? {
            if is_stamp {
                stamp = Some(map.next_value::<i64>()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(stamp)
    }
}

/// Whether a key is the one field looked for.
struct IsField<'f>(&'f str);

impl<'de> DeserializeSeed<'de> for IsField<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for IsField<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<bool, E> {
        Ok(key == self.0)
    }
}

/// The integer `field` of a JSON record, when it has one.
fn stamp_of(payload: &[u8], field: &str) -> Option<i64> {
    let mut deserializer = serde_json::Deserializer::from_slice(payload);
    StampOf(field).deserialize(&mut deserializer).ok().flatten()
}

/// Latency per interval of a window: one histogram open at a time, since
/// arrivals come in time order; each interval is summarised as a later
/// arrival (or the window's end) closes it.
pub struct IntervalLatency {
    start_us: i64,
    end_us: i64,
    interval_us: i64,
    /// The interval `open` belongs to.
    current: usize,
    open: Histogram<u64>,
    series: LatencySeries,
}

impl IntervalLatency {
    /// Intervals of `interval_us` from `window.start_us` to `window.end_us`,
    /// the last one possibly shorter.
    pub fn new(window: WindowAnnouncement, interval_us: i64) -> IntervalLatency {
        let interval_us = interval_us.max(1);
        IntervalLatency {
            start_us: window.start_us,
            end_us: window.end_us,
            interval_us,
            current: 0,
            open: stats::histogram::empty(),
            series: LatencySeries::new((interval_us / 1000) as u64),
        }
    }

    /// How many intervals the window has.
    fn intervals(&self) -> usize {
        ((self.end_us - self.start_us).max(0) as u64).div_ceil(self.interval_us as u64) as usize
    }

    /// Times one output record that arrived at `arrival_us`, `latency_us` late.
    /// Arrivals outside the window are not counted.
    pub fn record(&mut self, arrival_us: i64, latency_us: u64) -> Result<()> {
        if arrival_us < self.start_us || arrival_us >= self.end_us {
            return Ok(());
        }
        let index = ((arrival_us - self.start_us) / self.interval_us) as usize;
        self.close_until(index);
        // `record`, not `saturating_record`: only it grows the histogram.
        self.open
            .record(latency_us)
            .context("probe: recording an interval's latency")
    }

    /// Closes every interval before `index`.
    fn close_until(&mut self, index: usize) {
        while self.current < index {
            let interval_end =
                (self.start_us + (self.current as i64 + 1) * self.interval_us).min(self.end_us);
            let t_s = ((interval_end - self.start_us) as f64 / 1000.0).round() / 1000.0;
            let ms = |us: u64| us as f64 / 1000.0;
            let seen = !self.open.is_empty();
            let s = &mut self.series;
            s.t_s.push(t_s);
            s.count.push(self.open.len());
            s.p50_ms
                .push(seen.then(|| ms(self.open.value_at_quantile(0.5))));
            s.p99_ms
                .push(seen.then(|| ms(self.open.value_at_quantile(0.99))));
            s.max_ms.push(seen.then(|| ms(self.open.max())));
            self.open.reset();
            self.current += 1;
        }
    }

    /// The series, every interval of the window closed.
    pub fn finish(mut self) -> LatencySeries {
        self.close_until(self.intervals());
        self.series
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
        .set("fetch.wait.max.ms", FETCH_WAIT_MS.to_string())
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
        .set("linger.ms", crate::gendata::GENDATA_LINGER_MS)
        .create()
        .context("probe: creating the floor producer")?;
    let mut slot = now_us();
    while !stop.load(Ordering::Relaxed) {
        sleep_until_us(slot);
        let payload = format!("{{\"{FLOOR_STAMP}\":{slot}}}");
        // A full queue here would mean the broker is gone; the record is skipped.
        let _ = producer.send(BaseRecord::<(), str>::to(topic).payload(&payload));
        slot += FLOOR_PERIOD_US;
    }
    // Long enough for a cluster still catching up on a loaded host: a late
    // floor record is a measurement, not a failure.
    producer.flush(Duration::from_secs(30))?;
    Ok(())
}

/// The window's arrivals, timed.
struct Timing<'a> {
    floor_topic: &'a str,
    stamp_field: &'a str,
    /// The window, once known.
    window: Option<WindowAnnouncement>,
    output: Histogram<u64>,
    floor: Histogram<u64>,
    /// The output's latency per interval, once the window is known.
    intervals: Option<IntervalLatency>,
    unreadable: u64,
}

impl Timing<'_> {
    /// Times one record that arrived at `arrival_us`.
    fn time(&mut self, message: &BorrowedMessage<'_>, arrival_us: i64) -> Result<()> {
        if self.window.is_none_or(|w| arrival_us < w.start_us) {
            return Ok(());
        }
        let is_floor = message.topic() == self.floor_topic;
        let field = if is_floor {
            FLOOR_STAMP
        } else {
            self.stamp_field
        };
        let stamp = message.payload().and_then(|p| stamp_of(p, field));
        match (stamp, is_floor) {
            (Some(due_us), false) => {
                let latency_us = (arrival_us - due_us).max(1) as u64;
                self.output.record(latency_us)?;
                if let Some(intervals) = self.intervals.as_mut() {
                    intervals.record(arrival_us, latency_us)?;
                }
            }
            (Some(due_us), true) => self.floor.record((arrival_us - due_us).max(1) as u64)?,
            (None, false) => self.unreadable += 1,
            (None, true) => {}
        }
        Ok(())
    }
}

impl Timing<'_> {
    /// The window is known from `now_us` on: intervals of `interval_us` are
    /// kept from its start.
    fn learn(&mut self, window: WindowAnnouncement, interval_us: i64, now_us: i64) {
        if now_us > window.start_us {
            eprintln!(
                "probe: the window was announced {} ms after its start; \
                 arrivals before then are not counted",
                (now_us - window.start_us) / 1000
            );
        }
        self.window = Some(window);
        self.intervals = Some(IntervalLatency::new(window, interval_us));
    }
}

/// Runs the probe until the window ends, then prints or writes its summary.
pub fn run(plan: &ProbePlan) -> Result<()> {
    let (consumer, output_partitions) = assigned_consumer(plan)?;
    let stop = Arc::new(AtomicBool::new(false));
    let floor_writer = {
        let (bootstrap, topic, stop) = (
            plan.bootstrap.clone(),
            plan.floor_topic.clone(),
            stop.clone(),
        );
        std::thread::spawn(move || write_floor(&bootstrap, &topic, &stop))
    };
    // The output's end is read on a thread of its own: a slow or failed
    // broker round trip never holds up the timing of arrivals.
    let (ends_tx, ends_rx) = mpsc::channel();
    let end_reader = {
        let (plan, stop) = (plan.clone(), stop.clone());
        std::thread::spawn(move || {
            lag::read_output_ends(&plan, &output_partitions, &stop, &ends_tx)
        })
    };
    crate::outln!("{READY_LINE}");
    let mut timing = Timing {
        floor_topic: &plan.floor_topic,
        stamp_field: &plan.stamp_field,
        window: None,
        output: stats::histogram::empty(),
        floor: stats::histogram::empty(),
        intervals: None,
        unreadable: 0,
    };
    let mut lag = LagTally::new();
    let consumed = time_window(&consumer, plan, &ends_rx, &mut timing, &mut lag);
    stop.store(true, Ordering::Relaxed);
    let floor_result = floor_writer
        .join()
        .map_err(|_| anyhow::anyhow!("probe: the floor writer panicked"))?;
    let end_queries = end_reader
        .join()
        .map_err(|_| anyhow::anyhow!("probe: the output's end reader panicked"))?;
    consumed?;
    floor_result?;
    let summary = ProbeSummary {
        output: LatencySummary::from_histogram(&timing.output)?,
        floor: LatencySummary::from_histogram(&timing.floor)?,
        unreadable: timing.unreadable,
        lag: lag.summary(&end_queries?),
        intervals: timing.intervals.map(IntervalLatency::finish),
    };
    crate::handoff::write(plan.summary.as_deref(), &summary)
}

/// The probe's consumer, assigned every partition of the output and floor
/// topics from their beginning; the output's partitions.
fn assigned_consumer(plan: &ProbePlan) -> Result<(BaseConsumer, Vec<i32>)> {
    let consumer: BaseConsumer = consumer_config(&plan.bootstrap, &format!("{}-probe", plan.topic))
        .create()
        .context("probe: creating the consumer")?;
    assign_all(
        &consumer,
        &[&plan.topic, &plan.floor_topic],
        Offset::Beginning,
    )
    .context("probe")?;
    let output_partitions: Vec<i32> = consumer
        .assignment()
        .context("probe: reading its own assignment")?
        .elements_for_topic(&plan.topic)
        .iter()
        .map(|p| p.partition())
        .collect();
    Ok((consumer, output_partitions))
}

/// Times every arrival until the window ends, comparing the probe's
/// position with the output's end as each read of it falls due.
fn time_window(
    consumer: &BaseConsumer,
    plan: &ProbePlan,
    ends_rx: &mpsc::Receiver<OutputEnds>,
    timing: &mut Timing<'_>,
    lag: &mut LagTally,
) -> Result<()> {
    let mut watch = WindowWatch::new(plan.window.clone());
    let mut pending_ends: Option<OutputEnds> = None;
    loop {
        // A record returns the poll at once; the timeout only bounds how late
        // a read of the output's end is compared after it is due.
        let polled = consumer.poll(Duration::from_millis(10));
        let arrival = now_us();
        if timing.window.is_none() {
            match watch.poll(arrival) {
                Ok(Some(window)) => timing.learn(window, plan.interval_us, arrival),
                Ok(None) => {}
                Err(err) => return Err(err.context("probe: reading its window file")),
            }
        }
        if timing.window.is_some_and(|w| arrival >= w.end_us) {
            return Ok(());
        }
        match polled {
            Some(Ok(message)) => timing.time(&message, arrival)?,
            Some(Err(err)) if recoverable(&err) => {
                eprintln!("probe: {err} (the client reconnects by itself)");
            }
            Some(Err(err)) => return Err(err).context("probe: reading"),
            None => {}
        }
        if let Some(ends) = ends_rx.try_iter().last() {
            pending_ends = Some(ends);
        }
        if let Some(ends) = pending_ends.take_if(|ends| arrival >= ends.due_us()) {
            sample_lag(consumer, plan, &ends, timing, lag)?;
        }
    }
}

/// Compares the probe's position with `ends`, once what is already buffered
/// locally has been handed out and timed: records the probe holds are not
/// records it trails. A probe that cannot empty its buffer within one sampling
/// period is behind, and is sampled as it stands.
fn sample_lag(
    consumer: &BaseConsumer,
    plan: &ProbePlan,
    ends: &OutputEnds,
    timing: &mut Timing<'_>,
    lag: &mut LagTally,
) -> Result<()> {
    // The window's ends come only once the window is known.
    let Some(window) = timing.window else {
        return Ok(());
    };
    let drain_deadline = now_us() + lag::SAMPLE_PERIOD_US;
    while let Some(polled) = consumer.poll(Duration::ZERO) {
        let arrival = now_us();
        if arrival >= window.end_us {
            // Past the window nothing is timed, nor sampled.
            return Ok(());
        }
        let message = match polled {
            Ok(message) => message,
            Err(err) if recoverable(&err) => {
                eprintln!("probe: {err} (the client reconnects by itself)");
                continue;
            }
            Err(err) => return Err(err).context("probe: reading"),
        };
        timing.time(&message, arrival)?;
        if arrival >= drain_deadline {
            break;
        }
    }
    let now = now_us();
    match consumer.position() {
        Ok(position) => lag.sample(
            ends.trailing(&position, &plan.topic),
            timing.output.len(),
            now - window.start_us,
        ),
        // The position is local state; should it be unreadable, the sample is lost, not the run.
        Err(_) => lag.failed(),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_reports_percentiles_in_ms_and_keeps_the_histogram() {
        let mut h = stats::histogram::empty();
        for ms in 1..=1000u64 {
            h.record(ms * 1000).unwrap();
        }
        let s = LatencySummary::from_histogram(&h).unwrap();
        assert_eq!(s.count, 1000);
        assert!((s.p50_ms - 500.0).abs() < 1.0, "{}", s.p50_ms);
        assert!((s.p99_ms - 990.0).abs() < 1.0, "{}", s.p99_ms);
        assert!((s.max_ms - 1000.0).abs() < 1.0, "{}", s.max_ms);
        let back = messages::histogram::decode(&s.histogram).unwrap();
        assert_eq!(back.len(), 1000);
        assert_eq!(back.value_at_quantile(0.5), h.value_at_quantile(0.5));
    }

    #[test]
    fn the_stamp_is_read_from_the_named_field_only() {
        let pane = br#"{"window_start_us":1000000,"region":"eu-west","nested":{"window_end_us":5},"window_end_us":2000000,"count":3}"#;
        assert_eq!(stamp_of(pane, "window_end_us"), Some(2_000_000));
        assert_eq!(stamp_of(pane, "ts_us"), None);
        assert_eq!(
            stamp_of(br#"{"ts_us":17,"x":[1,{"ts_us":2}]}"#, "ts_us"),
            Some(17)
        );
        assert_eq!(stamp_of(br#"{"ts_us":"late"}"#, "ts_us"), None);
        assert_eq!(stamp_of(b"not json", "ts_us"), None);
    }

    #[test]
    fn each_arrival_lands_in_its_own_interval_and_the_last_is_shorter() {
        // a 2.5 s window in 1 s intervals: [0, 1), [1, 2), [2, 2.5)
        let window = WindowAnnouncement {
            start_us: 10_000_000,
            end_us: 12_500_000,
        };
        let mut intervals = IntervalLatency::new(window, 1_000_000);
        for (arrival_us, latency_us) in [
            (9_999_999, 99_000),   // before the window
            (10_000_000, 5_000),   // the first instant of [0, 1)
            (10_999_999, 7_000),   // its last
            (12_000_000, 900_000), // [2, 2.5): [1, 2) stays empty
            (12_499_999, 1_000),
            (12_500_000, 50_000), // the window's end is past it
        ] {
            intervals.record(arrival_us, latency_us).unwrap();
        }
        let s = intervals.finish();
        assert_eq!(s.interval_ms, 1000);
        assert_eq!(s.t_s, vec![1.0, 2.0, 2.5]);
        assert_eq!(s.count, vec![2, 0, 2]);
        // within the histogram's 3 significant digits
        let near = |got: Option<f64>, ms: f64| got.is_some_and(|v| (v / ms - 1.0).abs() < 1e-3);
        assert!(near(s.p50_ms[0], 5.0) && near(s.max_ms[0], 7.0), "{s:?}");
        assert_eq!((s.p50_ms[1], s.p99_ms[1], s.max_ms[1]), (None, None, None));
        assert!(near(s.p50_ms[2], 1.0), "{s:?}");
        assert!(
            near(s.p99_ms[2], 900.0) && near(s.max_ms[2], 900.0),
            "{s:?}"
        );
    }

    #[test]
    fn a_window_with_no_arrival_has_every_interval_empty() {
        let window = WindowAnnouncement {
            start_us: 0,
            end_us: 3_000_000,
        };
        let s = IntervalLatency::new(window, 1_000_000).finish();
        assert_eq!(s.count, vec![0, 0, 0]);
        assert_eq!(s.p99_ms, vec![None, None, None]);
    }

    #[test]
    fn an_empty_histogram_summarises_to_zero() {
        let s = LatencySummary::from_histogram(&stats::histogram::empty()).unwrap();
        assert_eq!((s.count, s.p50_ms, s.max_ms), (0, 0.0, 0.0));
    }
}
