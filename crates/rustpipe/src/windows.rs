//! The windowed-lowcard workload's stage: tumbling 1 s event-time windows
//! over `ts_us`, one pane per (region, service) that had records in a
//! window, emitted once and final when the window closes.
//!
//! The input is one partition in timestamp order, so a window closes on the
//! first record at or past its end: its panes go into the output before
//! that record is counted, and leave with that record's chunk, with no
//! timer. The last window of a run never closes, and is never emitted.
//!
//! The open window lives only in memory, so the input offset a chunk
//! reports is the open window's first record, never a record after it.
//! At-least-once stores it once the chunk's panes, and every earlier
//! chunk's, are acknowledged; exactly-once commits it in the transaction
//! that carries the panes of the window before it. Between two closes the
//! chunks report the same offset and have no output, so they add nothing to
//! commit. A restart resumes at the open window's first record and rebuilds
//! that window from its start: this is what makes a restart exact (at-least-
//! once may write a closed window's panes again, the same panes, but never
//! loses or changes one).

use std::borrow::Cow;
use std::collections::BTreeMap;

use anyhow::{bail, Context, Result};
use serde::Serialize;

use crate::chunk::{InputChunk, NextOffset, OutputChunk};
use crate::json;

/// A window's length: tumbling windows of 1 s.
const WINDOW_US: i64 = 1_000_000;

/// The input fields a pane needs (a projection of the 19).
#[derive(Debug, Default)]
pub(crate) struct Input<'a> {
    pub(crate) ts_us: i64,
    pub(crate) region: Cow<'a, str>,
    pub(crate) service: Cow<'a, str>,
    pub(crate) latency_ms: u32,
}

impl<'a> json::Projection<'a> for Input<'a> {
    const FIELDS: &'static [&'static str] = &["ts_us", "region", "service", "latency_ms"];

    fn set(&mut self, field: usize, value: json::Value<'_, 'a>) -> Result<()> {
        match field {
            0 => self.ts_us = value.i64()?,
            1 => self.region = value.str()?,
            2 => self.service = value.str()?,
            3 => self.latency_ms = value.u32()?,
            _ => unreachable!("field {field} is not in FIELDS"),
        }
        Ok(())
    }
}

/// One output record: a key's aggregates over one closed window.
#[derive(Serialize)]
struct Pane<'a> {
    window_start_us: i64,
    window_end_us: i64,
    region: &'a str,
    service: &'a str,
    count: u64,
    sum_latency_ms: i64,
    max_latency_ms: u32,
}

/// One key's aggregates in the open window; a count of 0 means the key had
/// no record in it yet.
#[derive(Debug, Default, Clone, Copy)]
struct Aggregate {
    count: u64,
    sum_latency_ms: i64,
    max_latency_ms: u32,
}

/// The window records are being counted into.
#[derive(Debug, Clone, Copy)]
struct Open {
    start_us: i64,
    /// Its first record: where a restart resumes to rebuild it.
    first: NextOffset,
    /// The offset after the last record counted.
    next: i64,
}

impl Open {
    /// The window starting at `start_us`, opened by the record at `first`.
    fn from(start_us: i64, first: NextOffset) -> Open {
        Open {
            start_us,
            first,
            next: first.offset,
        }
    }
}

/// The start of the window `ts_us` falls in.
fn window_start(ts_us: i64) -> i64 {
    ts_us.div_euclid(WINDOW_US) * WINDOW_US
}

/// The windowed stage: the open window and every key seen so far.
#[derive(Debug, Default)]
pub struct Windows {
    open: Option<Open>,
    /// Aggregates by region, then service. Keys stay from one window to the
    /// next with their counts set back to 0, so the low-cardinality state
    /// allocates only for a key never seen before.
    keys: BTreeMap<String, BTreeMap<String, Aggregate>>,
}

impl Windows {
    /// Counts `input`'s records into their windows, writing into `output`
    /// (cleared first) the panes of every window a record closes. The chunk
    /// covers input offsets up to the open window's first record.
    pub fn process(&mut self, input: &InputChunk, output: &mut OutputChunk) -> Result<()> {
        output.start(input);
        for index in 0..input.len() {
            let at = input.resume_at(index);
            let Some(payload) = input.record(index).payload else {
                bail!(
                    "rustpipe: the input record at offset {} has no value",
                    at.offset
                );
            };
            let event: Input<'_> =
                json::decode(payload).context("rustpipe: an input record is not an event")?;
            let start_us = window_start(event.ts_us);
            let open = match self.open {
                Some(open) if open.first.partition != at.partition => bail!(
                    "rustpipe: windowed-lowcard reads one input partition, and got \
                     records of partitions {} and {}",
                    open.first.partition,
                    at.partition
                ),
                Some(open) if at.offset < open.next => {
                    self.forget();
                    Open::from(start_us, at)
                }
                Some(open) if start_us < open.start_us => bail!(
                    "rustpipe: the input record at offset {} (ts_us {}) falls before the \
                     open window [{}, {}): the input is not in timestamp order",
                    at.offset,
                    event.ts_us,
                    open.start_us,
                    open.start_us + WINDOW_US
                ),
                Some(open) if start_us == open.start_us => open,
                Some(open) => {
                    self.close(open.start_us, output)?;
                    Open::from(start_us, at)
                }
                None => Open::from(start_us, at),
            };
            self.open = Some(Open {
                next: at.offset + 1,
                ..open
            });
            self.add(&event);
        }
        if let Some(open) = self.open {
            output.cover_up_to(open.first);
        }
        Ok(())
    }

    /// Drops every count, for a consumer that went back: a record before
    /// one already counted means the partition was handed back at its
    /// committed offset (after a rebalance), the open window's first record
    /// or an earlier window's. The windows are rebuilt from there, as after
    /// a restart, and no record is counted twice.
    fn forget(&mut self) {
        for services in self.keys.values_mut() {
            for aggregate in services.values_mut() {
                *aggregate = Aggregate::default();
            }
        }
    }

    /// Adds one record to its key's aggregates in the open window.
    fn add(&mut self, event: &Input<'_>) {
        let services = match self.keys.get_mut(event.region.as_ref()) {
            Some(services) => services,
            None => self.keys.entry(event.region.to_string()).or_default(),
        };
        let aggregate = match services.get_mut(event.service.as_ref()) {
            Some(aggregate) => aggregate,
            None => services.entry(event.service.to_string()).or_default(),
        };
        aggregate.count += 1;
        aggregate.sum_latency_ms += i64::from(event.latency_ms);
        aggregate.max_latency_ms = aggregate.max_latency_ms.max(event.latency_ms);
    }

    /// Writes the panes of the window starting at `start_us` into `output`,
    /// keyed `region|service`, and sets every count back to 0.
    fn close(&mut self, start_us: i64, output: &mut OutputChunk) -> Result<()> {
        let mut key = String::new();
        for (region, services) in &mut self.keys {
            for (service, aggregate) in services.iter_mut() {
                if aggregate.count == 0 {
                    continue;
                }
                let pane = Pane {
                    window_start_us: start_us,
                    window_end_us: start_us + WINDOW_US,
                    region,
                    service,
                    count: aggregate.count,
                    sum_latency_ms: aggregate.sum_latency_ms,
                    max_latency_ms: aggregate.max_latency_ms,
                };
                key.clear();
                key.push_str(region);
                key.push('|');
                key.push_str(service);
                output.push(Some(key.as_bytes()), |bytes| {
                    serde_json::to_writer(bytes, &pane)
                })?;
                *aggregate = Aggregate::default();
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use serde_json::{json, Value};

    /// A window boundary, as gendata's timestamps are: microseconds since
    /// the epoch.
    const T: i64 = 1_764_540_000_000_000;

    /// A chunk of events `(offset, ts_us, region, service, latency_ms)` on
    /// partition 0, with the other fields an event has.
    fn chunk(seq: u64, events: &[(i64, i64, &str, &str, u32)]) -> InputChunk {
        let mut chunk = InputChunk::default();
        chunk.reset(seq);
        for &(offset, ts_us, region, service, latency_ms) in events {
            let event = json!({
                "seq": offset, "event_id": format!("x-{offset}"), "ts_us": ts_us,
                "tenant": "tenant-001", "region": region, "zone": format!("{region}-a"),
                "service": service, "endpoint": "/api/v1/items", "method": "GET",
                "status": 200, "latency_ms": latency_ms, "sla_ms": 100, "bytes": 10,
            });
            chunk.push(0, offset, None, Some(&serde_json::to_vec(&event).unwrap()));
        }
        chunk
    }

    fn pane(start: i64, region: &str, service: &str, count: u64, sum: i64, max: u32) -> Value {
        json!({
            "window_start_us": start, "window_end_us": start + WINDOW_US,
            "region": region, "service": service,
            "count": count, "sum_latency_ms": sum, "max_latency_ms": max,
        })
    }

    /// The panes of an output chunk, each checked for its key.
    fn panes(output: &OutputChunk) -> Vec<Value> {
        output
            .records()
            .map(|record| {
                let pane: Value = serde_json::from_slice(record.payload.unwrap()).unwrap();
                let key = format!(
                    "{}|{}",
                    pane["region"].as_str().unwrap(),
                    pane["service"].as_str().unwrap()
                );
                assert_eq!(record.key, Some(key.as_bytes()));
                pane
            })
            .collect()
    }

    fn covers(output: &OutputChunk) -> &[NextOffset] {
        output.next_offsets()
    }

    fn at(offset: i64) -> [NextOffset; 1] {
        [NextOffset {
            partition: 0,
            offset,
        }]
    }

    /// Three windows over four chunks: each window's panes leave with the
    /// chunk of the record that closes it, the last window never does, and
    /// every chunk covers the input up to the open window's first record.
    #[test]
    fn panes_leave_with_the_closing_record_and_offsets_hold_at_the_open_window() {
        let mut windows = Windows::default();
        let mut out = OutputChunk::default();

        let first = chunk(
            0,
            &[
                (10, T, "eu-west", "search", 50),
                (11, T + 200_000, "eu-west", "search", 70),
                (12, T + 500_000, "us-east", "auth", 30),
                (13, T + 999_999, "eu-west", "checkout", 10),
            ],
        );
        windows.process(&first, &mut out).unwrap();
        assert!(panes(&out).is_empty());
        assert_eq!(covers(&out), at(10));

        // The first record at the window's end closes it, before it counts.
        let second = chunk(
            1,
            &[
                (14, T + 1_000_000, "us-east", "auth", 5),
                (15, T + 1_500_000, "eu-west", "search", 100),
            ],
        );
        windows.process(&second, &mut out).unwrap();
        assert_eq!(out.seq, 1);
        assert_eq!(
            panes(&out),
            [
                pane(T, "eu-west", "checkout", 1, 10, 10),
                pane(T, "eu-west", "search", 2, 120, 70),
                pane(T, "us-east", "auth", 1, 30, 30),
            ]
        );
        assert_eq!(covers(&out), at(14));

        // A record just before the end closes nothing; the offset stays.
        let third = chunk(2, &[(16, T + 1_999_999, "us-east", "auth", 7)]);
        windows.process(&third, &mut out).unwrap();
        assert!(panes(&out).is_empty());
        assert_eq!(covers(&out), at(14));

        let fourth = chunk(
            3,
            &[
                (17, T + 2_000_000, "ap-south", "payments", 3),
                (18, T + 2_100_000, "eu-west", "search", 9),
                (19, T + 2_900_000, "ap-south", "payments", 11),
            ],
        );
        windows.process(&fourth, &mut out).unwrap();
        assert_eq!(
            panes(&out),
            [
                pane(T + 1_000_000, "eu-west", "search", 1, 100, 100),
                pane(T + 1_000_000, "us-east", "auth", 2, 12, 7),
            ]
        );
        assert_eq!(covers(&out), at(17));
    }

    /// One chunk across two closes and an empty window: both closed
    /// windows' panes, in order, none for the empty one, and the offset of
    /// the open window's first record.
    #[test]
    fn one_chunk_can_close_several_windows() {
        let mut windows = Windows::default();
        let mut out = OutputChunk::default();
        let input = chunk(
            0,
            &[
                (0, T + 10, "sa-east", "catalog", 4),
                (1, T + 1_000_010, "sa-east", "catalog", 6),
                (2, T + 1_000_020, "sa-east", "catalog", 2),
                (3, T + 3_000_000, "us-west", "search", 1),
                (4, T + 3_000_001, "us-west", "search", 1),
            ],
        );
        windows.process(&input, &mut out).unwrap();
        assert_eq!(
            panes(&out),
            [
                pane(T, "sa-east", "catalog", 1, 4, 4),
                pane(T + 1_000_000, "sa-east", "catalog", 2, 8, 6),
            ]
        );
        assert_eq!(covers(&out), at(3));
    }

    /// A consumer handed its partition back at the committed offset reads
    /// the open window's records again: they count once.
    #[test]
    fn records_read_again_are_not_counted_twice() {
        let mut windows = Windows::default();
        let mut out = OutputChunk::default();
        let first = [
            (10, T, "eu-west", "search", 50),
            (11, T + 200_000, "eu-west", "search", 70),
        ];
        windows.process(&chunk(0, &first), &mut out).unwrap();
        let mut again = first.to_vec();
        again.push((12, T + WINDOW_US, "eu-west", "search", 1));
        windows.process(&chunk(1, &again), &mut out).unwrap();
        assert_eq!(panes(&out), [pane(T, "eu-west", "search", 2, 120, 70)]);
        assert_eq!(covers(&out), at(12));
    }

    #[test]
    fn a_pane_has_exactly_the_seven_fields() {
        let mut windows = Windows::default();
        let mut out = OutputChunk::default();
        let input = chunk(
            0,
            &[
                (0, T, "eu-west", "search", 4),
                (1, T + WINDOW_US, "eu-west", "search", 4),
            ],
        );
        windows.process(&input, &mut out).unwrap();
        let record = out.records().next().unwrap();
        let text = std::str::from_utf8(record.payload.unwrap()).unwrap();
        assert_eq!(
            text,
            format!(
                r#"{{"window_start_us":{T},"window_end_us":{},"region":"eu-west","service":"search","count":1,"sum_latency_ms":4,"max_latency_ms":4}}"#,
                T + WINDOW_US
            )
        );
    }

    #[test]
    fn a_record_older_than_the_open_window_is_an_error() {
        let mut windows = Windows::default();
        let mut out = OutputChunk::default();
        let input = chunk(
            0,
            &[
                (0, T + 1_500_000, "eu-west", "search", 4),
                (1, T + 999_999, "eu-west", "search", 4),
            ],
        );
        let err = windows.process(&input, &mut out).unwrap_err();
        assert!(err.to_string().contains("not in timestamp order"), "{err}");
    }

    #[test]
    fn records_of_two_partitions_are_an_error() {
        let mut windows = Windows::default();
        let mut input = chunk(0, &[(0, T, "eu-west", "search", 4)]);
        let payload = input.record(0).payload.unwrap().to_vec();
        input.push(1, 0, None, Some(&payload));
        let err = windows
            .process(&input, &mut OutputChunk::default())
            .unwrap_err();
        assert!(err.to_string().contains("one input partition"), "{err}");
    }

    #[test]
    fn window_boundaries_are_whole_seconds_of_ts_us() {
        assert_eq!(window_start(T), T);
        assert_eq!(window_start(T + 999_999), T);
        assert_eq!(window_start(T + 1_000_000), T + 1_000_000);
        assert_eq!(window_start(-1), -1_000_000);
    }

    /// gendata's own events at 1,400 a second, read in chunks of uneven
    /// sizes: the panes are those of every window but the last, computed
    /// here record by record, each once.
    #[test]
    fn gendata_events_give_the_panes_of_every_closed_window() {
        let (seed, n) = (21u64, 6_000u64);
        let ts_us = |seq: u64| T + 123_456 + seq as i64 * 714;
        let mut expected: HashMap<(i64, String, String), (u64, i64, u32)> = HashMap::new();
        let last_window = window_start(ts_us(n - 1));
        for seq in 0..n {
            let event = event_model::generate(seed, seq, ts_us(seq));
            let start = window_start(event.ts_us);
            if start == last_window {
                continue;
            }
            let entry = expected
                .entry((start, event.region.to_string(), event.service.to_string()))
                .or_default();
            entry.0 += 1;
            entry.1 += i64::from(event.latency_ms);
            entry.2 = entry.2.max(event.latency_ms);
        }

        let mut windows = Windows::default();
        let (mut input, mut out) = (InputChunk::default(), OutputChunk::default());
        let mut got = HashMap::new();
        let (mut seq, mut chunk_seq) = (0u64, 0u64);
        while seq < n {
            input.reset(chunk_seq);
            for _ in 0..(1 + chunk_seq * 37 % 300).min(n - seq) {
                let payload =
                    serde_json::to_vec(&event_model::generate(seed, seq, ts_us(seq))).unwrap();
                input.push(0, seq as i64, None, Some(&payload));
                seq += 1;
            }
            windows.process(&input, &mut out).unwrap();
            for pane in panes(&out) {
                let key = (
                    pane["window_start_us"].as_i64().unwrap(),
                    pane["region"].as_str().unwrap().to_string(),
                    pane["service"].as_str().unwrap().to_string(),
                );
                let value = (
                    pane["count"].as_u64().unwrap(),
                    pane["sum_latency_ms"].as_i64().unwrap(),
                    pane["max_latency_ms"].as_u64().unwrap() as u32,
                );
                assert!(got.insert(key, value).is_none(), "a pane emitted twice");
            }
            // The open window's first record: the first seq stamped in it.
            let open = window_start(ts_us(seq - 1));
            let first = (0..seq).find(|&s| window_start(ts_us(s)) == open).unwrap();
            assert_eq!(covers(&out), at(first as i64));
            chunk_seq += 1;
        }
        assert!(expected.len() > 100, "{} panes", expected.len());
        assert_eq!(got, expected);
    }
}
