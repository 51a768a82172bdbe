//! An ETL run's own figures and checks, from what the product logged for
//! each insert and from the rows read back out of ClickHouse.
//!
//! The workload's filter is the suite's own statement of it (health checks
//! are dropped), so a product's filter is checked, not trusted.

use hdrhistogram::Histogram;
use messages::histogram;
use messages::insert::InsertAck;
use serde::Deserialize;

use crate::config::Delivery;
use crate::gendata::avro::{self, AvroEncoder};
use crate::gendata::event::{self, Event};
use crate::gendata::schedule::Pacing;
use crate::model::sink_rows::{EventRow, RawRow};
use crate::results::{Verification, VerificationVerdict};

/// Whether the avro-etl workload makes a row of `event`.
pub fn keeps(event: &Event) -> bool {
    event.endpoint != "/health"
}

/// The sink's figures over the inserts acknowledged in a window.
#[derive(Debug, Clone, PartialEq)]
pub struct SinkFigures {
    pub inserts: u64,
    pub rows: u64,
    pub flush_p50_ms: f64,
    pub flush_p99_ms: f64,
    pub row_e2e_p50_ms: f64,
    pub row_e2e_p99_ms: f64,
    /// Pauses that began after the last acknowledgement before the window
    /// and by the last one in it.
    pub pauses: u64,
}

/// The figures of the inserts acknowledged in `[start_us, end_us)`; `None`
/// when there were none, or a latency histogram does not decode.
pub fn sink_figures(acks: &[InsertAck], start_us: i64, end_us: i64) -> Option<SinkFigures> {
    let in_window: Vec<&InsertAck> = acks
        .iter()
        .filter(|a| a.ack_us >= start_us && a.ack_us < end_us)
        .collect();
    if in_window.is_empty() {
        return None;
    }
    let mut flush = histogram::latency_us();
    let mut latency = histogram::latency_us();
    for ack in &in_window {
        flush.saturating_record(ack.flush_us.max(1));
        latency.add(histogram::decode(&ack.latency)?).ok()?;
    }
    let before = acks
        .iter()
        .filter(|a| a.ack_us < start_us)
        .map(|a| a.pauses)
        .max()
        .unwrap_or(0);
    let by_end = in_window.iter().map(|a| a.pauses).max().unwrap_or(0);
    let ms = |h: &Histogram<u64>, q: f64| h.value_at_quantile(q) as f64 / 1000.0;
    Some(SinkFigures {
        inserts: in_window.len() as u64,
        rows: in_window.iter().map(|a| a.rows).sum(),
        flush_p50_ms: ms(&flush, 0.5),
        flush_p99_ms: ms(&flush, 0.99),
        row_e2e_p50_ms: ms(&latency, 0.5),
        row_e2e_p99_ms: ms(&latency, 0.99),
        pauses: by_end.saturating_sub(before),
    })
}

/// What the table should hold: gendata's messages, their events, and the
/// filter.
#[derive(Debug, Clone)]
pub struct TableExpectation {
    pub seed: u64,
    /// Events per message.
    pub events: u32,
    /// Messages gendata wrote.
    pub messages: u64,
    /// Messages the product committed, summed over the partitions.
    pub committed: u64,
    /// gendata's pacing: a schedule's slots stamp the events.
    pub pacing: Pacing,
    pub delivery: Delivery,
}

/// Reads a table's rows one at a time against the expectation.
pub struct TableVerifier {
    expectation: TableExpectation,
    seen: Vec<u64>,
    tally: Tally,
}

impl TableVerifier {
    pub fn new(expectation: TableExpectation) -> TableVerifier {
        let events = expectation.messages * u64::from(expectation.events);
        TableVerifier {
            seen: vec![0; events.div_ceil(64) as usize],
            expectation,
            tally: Tally::default(),
        }
    }

    fn total_events(&self) -> u64 {
        self.expectation.messages * u64::from(self.expectation.events)
    }

    /// The event row `seq` should be: its message's slot when paced, else
    /// the time the row carries (an unpaced run's send time is not known).
    fn expected(&self, seq: u64, row_ts_us: i64) -> Event {
        let ts_us = match self.expectation.pacing {
            Pacing::Paced(schedule) => schedule.slot_us(seq / u64::from(self.expectation.events)),
            Pacing::Unpaced => row_ts_us,
        };
        event::generate(self.expectation.seed, seq, ts_us)
    }

    /// Checks one row.
    pub fn check(&mut self, row: &EventRow) {
        self.tally.rows += 1;
        if row.seq >= self.total_events() {
            self.tally.unexpected += 1;
            return;
        }
        let expected = self.expected(row.seq, row.ts_us);
        if !keeps(&expected) {
            self.tally.unexpected += 1;
            return;
        }
        if !first_sight(&mut self.seen, row.seq) {
            self.tally.duplicated += 1;
            return;
        }
        if !matches(row, &expected) {
            self.tally.corrupted += 1;
        }
    }

    /// The verification, once every row was checked. `table_count` and
    /// `table_duplicated` are ClickHouse's own count() and count of seqs
    /// present more than once, as a cross-check of the read.
    pub fn finish(self, table_count: u64, table_duplicated: u64) -> Verification {
        let e = &self.expectation;
        let mut expected = 0u64;
        let mut missing = 0u64;
        for seq in 0..self.total_events() {
            if is_seen(&self.seen, seq) {
                expected += 1;
            } else if keeps(&event::generate(e.seed, seq, 0)) {
                expected += 1;
                missing += 1;
            }
        }
        conclude(
            e,
            &self.tally,
            expected,
            missing,
            table_count,
            table_duplicated,
        )
    }
}

fn is_seen(seen: &[u64], seq: u64) -> bool {
    seen[(seq / 64) as usize] & (1 << (seq % 64)) != 0
}

/// Marks `seq` seen; false if it already was.
fn first_sight(seen: &mut [u64], seq: u64) -> bool {
    let (word, bit) = ((seq / 64) as usize, 1u64 << (seq % 64));
    let first = seen[word] & bit == 0;
    seen[word] |= bit;
    first
}

/// What reading a table found, row by row.
#[derive(Debug, Default)]
struct Tally {
    rows: u64,
    duplicated: u64,
    unexpected: u64,
    corrupted: u64,
}

/// The verdict and its account, from the tally and the rows owed.
fn conclude(
    e: &TableExpectation,
    tally: &Tally,
    expected: u64,
    missing: u64,
    table_count: u64,
    table_duplicated: u64,
) -> Verification {
    let complete = e.committed >= e.messages;
    let read_agrees = table_count == tally.rows;
    let verdict = if tally.unexpected > 0
        || tally.corrupted > 0
        || !read_agrees
        || (complete && missing > 0)
        || (e.delivery == Delivery::ExactlyOnce && tally.duplicated > 0)
    {
        VerificationVerdict::Failed
    } else if !complete {
        VerificationVerdict::Incomplete
    } else {
        VerificationVerdict::Passed
    };
    let message = match verdict {
        VerificationVerdict::Passed => format!(
            "{expected} rows owed for {} messages, all in the table once or more ({} duplicated)",
            e.messages, tally.duplicated
        ),
        VerificationVerdict::Incomplete => format!(
            "the product committed {} of {} messages: {missing} rows not in the table were not owed yet",
            e.committed, e.messages
        ),
        VerificationVerdict::Failed if !read_agrees => format!(
            "the table counts {table_count} rows but {} were read back",
            tally.rows
        ),
        VerificationVerdict::Failed => format!(
            "{missing} missing, {} unexpected, {} corrupted, {} duplicated rows \
             ({table_duplicated} seqs more than once in the table)",
            tally.unexpected, tally.corrupted, tally.duplicated
        ),
    };
    Verification {
        committed_offset: e.committed,
        input_records: e.messages,
        expected,
        output_records: tally.rows,
        missing,
        duplicated: tally.duplicated,
        unexpected: tally.unexpected,
        corrupted: tally.corrupted,
        beyond_commit: 0,
        out_of_order: 0,
        verdict,
        message,
    }
}

/// Reads the raw arm's table (one row per message: its seq and its bytes)
/// against gendata's exact datums.
pub struct RawVerifier {
    expectation: TableExpectation,
    encoder: AvroEncoder,
    datum: Vec<u8>,
    seen: Vec<u64>,
    tally: Tally,
}

#[derive(Deserialize)]
struct Stamps {
    events: Vec<Stamp>,
}

#[derive(Deserialize)]
struct Stamp {
    ts_us: i64,
}

impl RawVerifier {
    pub fn new(expectation: TableExpectation) -> RawVerifier {
        RawVerifier {
            seen: vec![0; expectation.messages.div_ceil(64) as usize],
            encoder: AvroEncoder::new(expectation.events),
            datum: Vec::new(),
            expectation,
            tally: Tally::default(),
        }
    }

    /// Checks one row: its bytes must be message `seq`'s datum exactly.
    pub fn check(&mut self, row: &RawRow) {
        self.tally.rows += 1;
        if row.seq >= self.expectation.messages {
            self.tally.unexpected += 1;
            return;
        }
        if !first_sight(&mut self.seen, row.seq) {
            self.tally.duplicated += 1;
            return;
        }
        // Paced, the datum's time is its slot; unpaced, the one it carries.
        let ts_us = match self.expectation.pacing {
            Pacing::Paced(schedule) => Some(schedule.slot_us(row.seq)),
            Pacing::Unpaced => {
                serde_avro_fast::from_datum_slice::<Stamps>(&row.payload, avro::schema())
                    .ok()
                    .and_then(|s| s.events.first().map(|e| e.ts_us))
            }
        };
        let intact = ts_us.is_some_and(|ts_us| {
            self.encoder
                .encode(self.expectation.seed, row.seq, ts_us, &mut self.datum)
                .is_ok()
                && self.datum == row.payload
        });
        if !intact {
            self.tally.corrupted += 1;
        }
    }

    /// The verification, once every row was checked.
    pub fn finish(self, table_count: u64, table_duplicated: u64) -> Verification {
        let e = &self.expectation;
        let missing = (0..e.messages).filter(|&m| !is_seen(&self.seen, m)).count() as u64;
        conclude(
            e,
            &self.tally,
            e.messages,
            missing,
            table_count,
            table_duplicated,
        )
    }
}

/// Whether a row holds every field of `event`, `ts` its whole second.
fn matches(row: &EventRow, event: &Event) -> bool {
    row.event() == event.as_ref() && row.ts == event_model::ts_seconds(event.ts_us)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gendata::schedule::Schedule;

    const START: i64 = 1_700_000_000_000_000;

    fn expectation(messages: u64, committed: u64) -> TableExpectation {
        TableExpectation {
            seed: 42,
            events: 5,
            messages,
            committed,
            pacing: Pacing::new(START, 100),
            delivery: Delivery::AtLeastOnce,
        }
    }

    /// The rows a correct product writes for `messages` messages.
    fn correct_rows(messages: u64) -> Vec<EventRow> {
        let schedule = Schedule::new(START, 100);
        (0..messages * 5)
            .map(|seq| event::generate(42, seq, schedule.slot_us(seq / 5)))
            .filter(keeps)
            .map(|e| EventRow::of(&e))
            .collect()
    }

    fn verify(rows: &[EventRow], messages: u64, committed: u64) -> Verification {
        let mut verifier = TableVerifier::new(expectation(messages, committed));
        rows.iter().for_each(|r| verifier.check(r));
        verifier.finish(rows.len() as u64, 0)
    }

    #[test]
    fn a_correct_table_passes_with_the_filters_count() {
        let rows = correct_rows(200);
        assert!(rows.len() < 1000 && rows.len() > 800, "{}", rows.len());
        let v = verify(&rows, 200, 200);
        assert_eq!(v.verdict, VerificationVerdict::Passed, "{}", v.message);
        assert_eq!(v.expected, rows.len() as u64);
        assert_eq!(
            (v.missing, v.duplicated, v.unexpected, v.corrupted),
            (0, 0, 0, 0)
        );
    }

    #[test]
    fn lost_repeated_changed_and_filtered_rows_are_each_counted() {
        let mut rows = correct_rows(200);
        rows.remove(10);
        rows.remove(20);
        rows.push(rows[5].clone());
        rows[7].latency_ms += 1;
        rows[8].ts_us += 1_000_000;
        let health = (0..1000)
            .map(|seq| event::generate(42, seq, Schedule::new(START, 100).slot_us(seq / 5)))
            .find(|e| !keeps(e))
            .unwrap();
        rows.push(EventRow::of(&health));
        let v = verify(&rows, 200, 200);
        assert_eq!(v.verdict, VerificationVerdict::Failed);
        assert_eq!(
            (v.missing, v.duplicated, v.unexpected, v.corrupted),
            (2, 1, 1, 2)
        );
    }

    #[test]
    fn repeats_alone_pass_at_least_once_and_fail_exactly_once() {
        let mut rows = correct_rows(50);
        rows.push(rows[0].clone());
        assert_eq!(verify(&rows, 50, 50).verdict, VerificationVerdict::Passed);
        let mut verifier = TableVerifier::new(TableExpectation {
            delivery: Delivery::ExactlyOnce,
            ..expectation(50, 50)
        });
        rows.iter().for_each(|r| verifier.check(r));
        assert_eq!(
            verifier.finish(rows.len() as u64, 1).verdict,
            VerificationVerdict::Failed
        );
    }

    #[test]
    fn uncommitted_messages_make_it_incomplete_not_failed() {
        let rows = correct_rows(100);
        let v = verify(&rows, 120, 100);
        assert_eq!(v.verdict, VerificationVerdict::Incomplete, "{}", v.message);
        assert!(v.missing > 0);
    }

    #[test]
    fn a_read_that_disagrees_with_the_tables_count_fails() {
        let rows = correct_rows(20);
        let mut verifier = TableVerifier::new(expectation(20, 20));
        rows.iter().for_each(|r| verifier.check(r));
        let v = verifier.finish(rows.len() as u64 + 1, 0);
        assert_eq!(v.verdict, VerificationVerdict::Failed);
        assert!(v.message.contains("counts"), "{}", v.message);
    }

    fn raw_rows(messages: u64) -> Vec<RawRow> {
        let schedule = Schedule::new(START, 100);
        let mut encoder = AvroEncoder::new(5);
        (0..messages)
            .map(|seq| {
                let mut payload = Vec::new();
                encoder
                    .encode(42, seq, schedule.slot_us(seq), &mut payload)
                    .unwrap();
                RawRow { seq, payload }
            })
            .collect()
    }

    fn verify_raw(rows: &[RawRow], expectation: TableExpectation) -> Verification {
        let mut verifier = RawVerifier::new(expectation);
        rows.iter().for_each(|r| verifier.check(r));
        verifier.finish(rows.len() as u64, 0)
    }

    #[test]
    fn raw_rows_must_be_gendatas_exact_datums() {
        let rows = raw_rows(30);
        let v = verify_raw(&rows, expectation(30, 30));
        assert_eq!(v.verdict, VerificationVerdict::Passed, "{}", v.message);
        assert_eq!((v.expected, v.output_records), (30, 30));
        // Unpaced, the time comes from the datum itself.
        let unpaced = TableExpectation {
            pacing: Pacing::Unpaced,
            ..expectation(30, 30)
        };
        assert_eq!(
            verify_raw(&rows, unpaced).verdict,
            VerificationVerdict::Passed
        );

        let mut bad = rows.clone();
        bad.remove(3);
        bad.push(bad[0].clone());
        let last = bad[10].payload.len() - 1;
        bad[10].payload[last] ^= 1;
        bad.push(RawRow {
            seq: 99,
            payload: Vec::new(),
        });
        let v = verify_raw(&bad, expectation(30, 30));
        assert_eq!(v.verdict, VerificationVerdict::Failed);
        assert_eq!(
            (v.missing, v.duplicated, v.unexpected, v.corrupted),
            (1, 1, 1, 1)
        );
    }

    fn ack(ack_us: i64, flush_us: u64, pauses: u64, latencies_us: &[u64]) -> InsertAck {
        let mut h = histogram::latency_us();
        latencies_us.iter().for_each(|&l| h.record(l).unwrap());
        InsertAck {
            ack_us,
            flush_us,
            rows: latencies_us.len() as u64,
            pauses,
            latency: histogram::encode(&h).unwrap(),
        }
    }

    #[test]
    fn only_the_windows_inserts_count() {
        let acks = [
            ack(900, 50_000, 3, &[999_000]),
            ack(1_000, 20_000, 3, &[10_000, 12_000]),
            ack(1_500, 30_000, 5, &[20_000, 22_000]),
            ack(2_000, 90_000, 9, &[500_000]),
        ];
        let f = sink_figures(&acks, 1_000, 2_000).unwrap();
        assert_eq!((f.inserts, f.rows, f.pauses), (2, 4, 2));
        assert!((f.flush_p99_ms - 30.0).abs() < 0.1, "{}", f.flush_p99_ms);
        assert!(
            (f.row_e2e_p99_ms - 22.0).abs() < 0.1,
            "{}",
            f.row_e2e_p99_ms
        );
        assert!(
            (f.row_e2e_p50_ms - 12.0).abs() < 0.1,
            "{}",
            f.row_e2e_p50_ms
        );
        assert_eq!(sink_figures(&acks, 3_000, 4_000), None);
    }
}
