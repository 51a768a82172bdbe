//! The probe's check on itself: how far its own consumer trails the output's
//! end, in records and in milliseconds' worth of output.
//!
//! A probe that falls behind adds its own delay to every latency it measures.
//! About every 100 ms of the window, a thread of the probe reads the end of
//! each output partition; the timing loop, once it has handed out what it
//! already holds, compares its position with that end one fetch wait after
//! the broker answered. The records between them become time through the
//! output rate observed in the window so far.
//!
//! Why one fetch wait later: a record that just became visible is due at a
//! probe that keeps up within one fetch (every latency and the floor pay that
//! trip); a record still missing after it is one the probe trails. Output
//! comes in bursts, and a burst in flight read as an average rate would count
//! as many milliseconds. Why the end is read first: read after the position,
//! the read's own round trip (several milliseconds on a busy host, as long as
//! the lag the check is meant to catch) would count as trailing. The figure is
//! thus a lower bound: a probe flagged as behind trailed by at least that much.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use hdrhistogram::Histogram;
use messages::histogram::latency_us;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::util::Timeout;
use rdkafka::{Offset, TopicPartitionList};

use super::{ProbeLag, ProbePlan, FETCH_WAIT_MS};
use crate::clock::now_us;
use crate::handoff::WindowWatch;

/// The output's end is read about this often during the window.
pub(super) const SAMPLE_PERIOD_US: i64 = 100_000;
/// The probe's fetch wait, in microseconds.
const FETCH_WAIT_US: i64 = FETCH_WAIT_MS as i64 * 1000;
/// A read of the output's end is a broker round trip; past this it has failed.
const QUERY_TIMEOUT: Duration = Duration::from_secs(1);

/// One partition's end, as a read_committed reader sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct PartitionEnd {
    partition: i32,
    /// The first offset still in the log: where a consumer that has handed
    /// out nothing yet stands, since the probe reads from the beginning.
    low: i64,
    /// The last stable offset.
    end: i64,
}

/// The end of every output partition at one moment.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct OutputEnds {
    partitions: Vec<PartitionEnd>,
    /// When the broker's answer was in, epoch microseconds.
    answered_us: i64,
}

impl OutputEnds {
    /// When the probe's position is compared with these ends: one fetch wait
    /// after the answer, the time a keeping-up probe needs to fetch them.
    pub(super) fn due_us(&self) -> i64 {
        self.answered_us + FETCH_WAIT_US
    }

    /// Records between `position` (the probe's, for `topic`) and these ends.
    /// A partition whose position has passed its end (records that became
    /// visible after the end was read) trails by nothing.
    pub(super) fn trailing(&self, position: &TopicPartitionList, topic: &str) -> u64 {
        self.partitions
            .iter()
            .map(|p| {
                let at = match position
                    .find_partition(topic, p.partition)
                    .map(|e| e.offset())
                {
                    Some(Offset::Offset(offset)) => offset,
                    // Nothing handed out yet from this partition.
                    _ => p.low,
                };
                (p.end - at).max(0) as u64
            })
            .sum()
    }
}

/// How the reads of the output's end went.
pub(super) struct EndQueries {
    failed: u64,
    /// Duration of every read, microseconds.
    durations: Histogram<u64>,
}

/// Reads the end of each of `partitions` of the output every sampling
/// period of the window and sends it to the timing loop, until the window
/// ends or `stop` is set.
pub(super) fn read_output_ends(
    plan: &ProbePlan,
    partitions: &[i32],
    stop: &AtomicBool,
    ends: &Sender<OutputEnds>,
) -> Result<EndQueries> {
    // A client of its own, so these requests never wait behind the probe's
    // fetches on one connection. It must be read_committed: librdkafka's
    // query_watermark_offsets (behind fetch_watermarks) sends ListOffsets with
    // the client's isolation.level, so its high value is then the last stable
    // offset, the end a read_committed reader can reach; records of open
    // transactions lie beyond it and are not counted as trailing. The cached
    // get_watermark_offsets is not used: it is only as fresh as the probe's
    // last fetch, and a stalled probe is what this looks for.
    let client: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &plan.bootstrap)
        .set("isolation.level", "read_committed")
        .create()
        .context("probe: creating the output's end reader")?;
    let mut queries = EndQueries {
        failed: 0,
        durations: latency_us(),
    };
    // One untimed read before the window: connecting and finding the
    // partitions' leader are set-up, not the round trip a sample costs. A
    // failure here shows again at the first sample.
    let _ = read_ends(&client, &plan.topic, partitions);
    // A window announced at run time is looked for in its file here too.
    let mut watch = WindowWatch::new(plan.window.clone());
    let window = loop {
        if let Some(window) = watch.poll(now_us())? {
            break window;
        }
        if !wait_until(watch.next_look_us(), stop) {
            return Ok(queries);
        }
    };
    let mut next_us = window.start_us;
    while wait_until(next_us, stop) && now_us() < window.end_us {
        let began = Instant::now();
        let read = read_ends(&client, &plan.topic, partitions);
        queries
            .durations
            .saturating_record(began.elapsed().as_micros().max(1) as u64);
        match read {
            Ok(read) => {
                if ends.send(read).is_err() {
                    break;
                }
            }
            Err(_) => queries.failed += 1,
        }
        next_us = next_sample_us(next_us, now_us());
    }
    Ok(queries)
}

/// Sleeps until `target_us` in short steps; false when `stop` was set.
fn wait_until(target_us: i64, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let wait = target_us - now_us();
        if wait <= 0 {
            return true;
        }
        std::thread::sleep(Duration::from_micros(wait.min(SAMPLE_PERIOD_US) as u64));
    }
}

/// The first sampling time after `now_us` on the grid of `last_us`: a slow
/// read skips the samples it overran instead of bunching them up.
fn next_sample_us(last_us: i64, now_us: i64) -> i64 {
    let periods = (now_us - last_us).max(0) / SAMPLE_PERIOD_US + 1;
    last_us + periods * SAMPLE_PERIOD_US
}

/// The end of each partition, all within one [`QUERY_TIMEOUT`].
fn read_ends(client: &BaseConsumer, topic: &str, partitions: &[i32]) -> Result<OutputEnds> {
    let deadline = Instant::now() + QUERY_TIMEOUT;
    let mut ends = Vec::with_capacity(partitions.len());
    for &partition in partitions {
        let left = Timeout::After(deadline.saturating_duration_since(Instant::now()));
        let (low, end) = client.fetch_watermarks(topic, partition, left)?;
        ends.push(PartitionEnd {
            partition,
            low,
            end,
        });
    }
    Ok(OutputEnds {
        partitions: ends,
        answered_us: now_us(),
    })
}

/// `trailing` records as microseconds worth of output, at the rate of
/// `timed` records in `elapsed_us`; `None` while that rate is unknown or zero.
fn worth_us(trailing: u64, timed: u64, elapsed_us: i64) -> Option<u64> {
    if timed == 0 || elapsed_us <= 0 {
        return None;
    }
    let worth = u128::from(trailing) * elapsed_us as u128 / u128::from(timed);
    Some(worth.min(u128::from(u64::MAX)) as u64)
}

/// The samples of one window.
pub(super) struct LagTally {
    samples: u64,
    trailing_max: u64,
    failed: u64,
    /// Trailing worth of every sample, microseconds.
    worth: Histogram<u64>,
}

impl LagTally {
    pub(super) fn new() -> LagTally {
        LagTally {
            samples: 0,
            trailing_max: 0,
            failed: 0,
            worth: latency_us(),
        }
    }

    /// One comparison: `trailing` records behind, after `timed` output
    /// records in `elapsed_us` of window. Skipped while the rate is unknown.
    pub(super) fn sample(&mut self, trailing: u64, timed: u64, elapsed_us: i64) {
        let Some(worth) = worth_us(trailing, timed, elapsed_us) else {
            return;
        };
        self.samples += 1;
        self.trailing_max = self.trailing_max.max(trailing);
        self.worth.saturating_record(worth);
    }

    /// A sample that could not be taken.
    pub(super) fn failed(&mut self) {
        self.failed += 1;
    }

    /// The summary, with how the reads of the output's end went.
    pub(super) fn summary(&self, queries: &EndQueries) -> ProbeLag {
        let ms = |h: &Histogram<u64>, q: f64| h.value_at_quantile(q) as f64 / 1000.0;
        ProbeLag {
            samples: self.samples,
            trailing_records_max: self.trailing_max,
            trailing_p99_ms: ms(&self.worth, 0.99),
            trailing_max_ms: self.worth.max() as f64 / 1000.0,
            failed_queries: self.failed + queries.failed,
            query_p99_ms: ms(&queries.durations, 0.99),
            query_max_ms: queries.durations.max() as f64 / 1000.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailing_records_become_ms_worth_of_output_at_the_observed_rate() {
        // 10,000 records in 2 s = 5 per ms: 50 records trail by 10 ms.
        assert_eq!(worth_us(50, 10_000, 2_000_000), Some(10_000));
        assert_eq!(worth_us(0, 10_000, 2_000_000), Some(0));
        // 3 records in 1 s: one record is a third of a second.
        assert_eq!(worth_us(1, 3, 1_000_000), Some(333_333));
    }

    #[test]
    fn no_worth_while_the_output_rate_is_unknown() {
        assert_eq!(worth_us(10, 0, 1_000_000), None);
        assert_eq!(worth_us(10, 5, 0), None);
    }

    #[test]
    fn samples_without_a_rate_are_skipped() {
        let mut lag = LagTally::new();
        lag.sample(40, 0, 500_000);
        lag.sample(5, 5_000, 1_000_000);
        lag.sample(20, 10_000, 2_000_000);
        lag.failed();
        let queries = EndQueries {
            failed: 2,
            durations: latency_us(),
        };
        let s = lag.summary(&queries);
        assert_eq!(s.samples, 2);
        assert_eq!(s.trailing_records_max, 20);
        assert!(
            (s.trailing_max_ms - 4.0).abs() < 0.01,
            "{}",
            s.trailing_max_ms
        );
        assert_eq!(s.failed_queries, 3);
    }

    fn ends(parts: &[(i32, i64, i64)]) -> OutputEnds {
        OutputEnds {
            partitions: parts
                .iter()
                .map(|&(partition, low, end)| PartitionEnd {
                    partition,
                    low,
                    end,
                })
                .collect(),
            answered_us: 0,
        }
    }

    #[test]
    fn trailing_sums_the_partitions_between_position_and_end() {
        let mut position = TopicPartitionList::new();
        position
            .add_partition_offset("out", 0, Offset::Offset(90))
            .unwrap();
        position
            .add_partition_offset("out", 1, Offset::Offset(200))
            .unwrap();
        position
            .add_partition_offset("floor", 0, Offset::Offset(0))
            .unwrap();
        let ends = ends(&[(0, 0, 100), (1, 0, 205)]);
        assert_eq!(ends.trailing(&position, "out"), 15);
    }

    #[test]
    fn a_partition_with_nothing_handed_out_trails_from_its_start() {
        let mut position = TopicPartitionList::new();
        position
            .add_partition_offset("out", 0, Offset::Invalid)
            .unwrap();
        assert_eq!(ends(&[(0, 3, 10)]).trailing(&position, "out"), 7);
        // and a partition missing from the position alike
        assert_eq!(ends(&[(1, 0, 4)]).trailing(&position, "out"), 4);
    }

    #[test]
    fn a_position_past_the_end_read_earlier_trails_by_nothing() {
        let mut position = TopicPartitionList::new();
        position
            .add_partition_offset("out", 0, Offset::Offset(120))
            .unwrap();
        assert_eq!(ends(&[(0, 0, 100)]).trailing(&position, "out"), 0);
    }

    #[test]
    fn an_end_is_compared_one_fetch_wait_after_the_answer() {
        let mut read = ends(&[(0, 0, 10)]);
        read.answered_us = 5_000_000;
        assert_eq!(read.due_us(), 5_010_000);
    }

    #[test]
    fn a_slow_read_skips_the_samples_it_overran() {
        assert_eq!(next_sample_us(1_000_000, 1_000_400), 1_100_000);
        assert_eq!(next_sample_us(1_000_000, 1_100_000), 1_200_000);
        assert_eq!(next_sample_us(1_000_000, 1_350_000), 1_400_000);
    }
}
