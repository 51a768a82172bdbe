//! windowed-lowcard: tumbling event-time windows of 1 s over each event's
//! `ts_us`, per key (region, service: 42 keys), emitting one final pane per
//! key and window with the count, sum and max of `latency_ms`.
//!
//! Allowed lateness is 0: gendata's timestamps are in order on the one input
//! partition, so a window closes when the first record of a later window is
//! read, and its panes are due from that window's end. The probe times a
//! pane from `window_end_us`. The last window of a run never closes (no later
//! record arrives), so it owes nothing, and a pane of it is early.
//!
//! Every pane is checked exactly against the panes the schedule and seed
//! imply: missing, duplicated, wrong (count, sum or max) and late (first
//! seen after a pane of a later window). An unpaced run has no schedule to
//! place records in windows, so it cannot be checked.

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;

use super::{
    Checked, Expectation, Implementation, Output, OutputVerifier, SanitySpec, Tally, TopicOutput,
    Wording,
};
use crate::config::Encoding;
use crate::gendata::event::{Core, REGIONS, SERVICES};
use crate::gendata::schedule::{Pacing, Schedule};

/// The window's length.
pub const WINDOW_US: i64 = 1_000_000;

#[derive(Debug)]
pub struct WindowedLowcard;

static SANITY: SanitySpec = SanitySpec {
    unit: "panes",
    content: "pane aggregates",
    // one window's panes at any rate the suite runs: every key is seen
    min_content_sample: 40,
    figures: &[
        ("panes_per_window", "panes / window"),
        ("expected_panes_per_window", "expected / window"),
    ],
};

impl Implementation for WindowedLowcard {
    fn name(&self) -> &'static str {
        "windowed-lowcard"
    }

    fn input(&self) -> Encoding {
        Encoding::Json
    }

    fn output(&self) -> Output {
        Output::Topic(&Self)
    }
}

impl TopicOutput for WindowedLowcard {
    fn stamp_field(&self) -> &'static str {
        "window_end_us"
    }

    fn verifier(&self, expectation: Expectation) -> Result<Box<dyn OutputVerifier>, String> {
        let schedule = expectation
            .pacing
            .schedule()
            .ok_or("an unpaced run has no schedule to place its records in windows")?;
        Ok(Box::new(Verifier::new(expectation, schedule)))
    }

    fn expected_selectivity(&self, seed: u64, pacing: Pacing, from: u64, to: u64) -> Option<f64> {
        let schedule = pacing.schedule()?;
        if to <= from {
            return None;
        }
        // The windows closed by the records of [from, to): from the window of
        // `from` up to, not including, the window of `to - 1`.
        let first = window_of(schedule.slot_us(from));
        let last = window_of(schedule.slot_us(to - 1));
        if first == last {
            return None;
        }
        let panes = Panes::of(
            seed,
            schedule,
            first_seq_from(schedule, first)..first_seq_from(schedule, last),
        );
        Some(panes.len() as f64 / (to - from) as f64)
    }

    fn owed_until(&self, pacing: Pacing, input_records: u64) -> u64 {
        match pacing.schedule() {
            Some(s) if input_records > 0 => {
                first_seq_from(s, window_of(s.slot_us(input_records - 1)))
            }
            _ => input_records,
        }
    }

    fn sanity(&self) -> &'static SanitySpec {
        &SANITY
    }

    fn needs_schedule(&self) -> bool {
        true
    }
}

/// The start of the window holding `ts_us`.
pub fn window_of(ts_us: i64) -> i64 {
    ts_us.div_euclid(WINDOW_US) * WINDOW_US
}

/// The first sequence number whose slot is at or after `ts_us`.
fn first_seq_from(schedule: Schedule, ts_us: i64) -> u64 {
    let (mut low, mut high) = (0u64, 1u64);
    while schedule.slot_us(high) < ts_us {
        low = high;
        high *= 2;
    }
    while low < high {
        let mid = low + (high - low) / 2;
        if schedule.slot_us(mid) < ts_us {
            low = mid + 1;
        } else {
            high = mid;
        }
    }
    low
}

/// A key: indices into gendata's region and service tables.
type Key = (u8, u8);

fn key_of(core: &Core) -> Key {
    (
        REGIONS
            .iter()
            .position(|(r, _)| *r == core.region)
            .unwrap_or(0) as u8,
        SERVICES
            .iter()
            .position(|(s, _)| *s == core.service)
            .unwrap_or(0) as u8,
    )
}

fn key_named(region: &str, service: &str) -> Option<Key> {
    Some((
        REGIONS.iter().position(|(r, _)| *r == region)? as u8,
        SERVICES.iter().position(|(s, _)| *s == service)? as u8,
    ))
}

/// One pane's aggregates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Aggregate {
    pub count: u64,
    pub sum_latency_ms: u64,
    pub max_latency_ms: u64,
}

/// Panes by (window start, key).
#[derive(Debug, Default)]
struct Panes(BTreeMap<(i64, Key), Aggregate>);

impl Panes {
    /// The panes of the records `seqs`.
    fn of(seed: u64, schedule: Schedule, seqs: std::ops::Range<u64>) -> Panes {
        let mut panes = Panes::default();
        for seq in seqs {
            let core = Core::generate(seed, seq);
            let pane = panes
                .0
                .entry((window_of(schedule.slot_us(seq)), key_of(&core)))
                .or_default();
            pane.count += 1;
            pane.sum_latency_ms += u64::from(core.latency_ms);
            pane.max_latency_ms = pane.max_latency_ms.max(u64::from(core.latency_ms));
        }
        panes
    }

    fn len(&self) -> usize {
        self.0.len()
    }
}

/// One output pane as a product writes it.
#[derive(Deserialize)]
struct PaneRecord {
    window_start_us: i64,
    window_end_us: i64,
    region: String,
    service: String,
    count: u64,
    sum_latency_ms: u64,
    max_latency_ms: u64,
}

struct Verifier {
    expectation: Expectation,
    /// Every pane of the input's closed windows.
    expected: Panes,
    /// Panes of windows before this one are owed: the earlier of the last
    /// window's start (it never closes) and the window of the first
    /// uncommitted record.
    owed_before: i64,
    /// How often each pane was seen.
    seen: HashMap<(i64, Key), u32>,
    /// The latest window a pane was seen of.
    latest_window: Option<i64>,
    tally: Tally,
    checked: u64,
    wrong: u64,
}

impl Verifier {
    fn new(expectation: Expectation, schedule: Schedule) -> Verifier {
        let e = &expectation;
        let closed_before = match e.input_records {
            0 => i64::MIN,
            n => window_of(schedule.slot_us(n - 1)),
        };
        // The first record the commit does not cover (on several
        // partitions, the earliest across them) bounds the panes owed.
        let first_uncovered = (0..e.input_records).find(|&seq| !e.owns(seq));
        let owed_before = match first_uncovered {
            Some(seq) => closed_before.min(window_of(schedule.slot_us(seq))),
            None => closed_before,
        };
        let seqs = 0..first_seq_from(schedule, closed_before).min(e.input_records);
        Verifier {
            expected: Panes::of(e.seed, schedule, seqs),
            expectation,
            owed_before,
            seen: HashMap::new(),
            latest_window: None,
            tally: Tally::default(),
            checked: 0,
            wrong: 0,
        }
    }
}

impl OutputVerifier for Verifier {
    fn observe(&mut self, payload: &[u8]) {
        self.tally.output_records += 1;
        let pane = serde_json::from_slice::<PaneRecord>(payload)
            .ok()
            .filter(|p| {
                p.window_start_us == window_of(p.window_start_us)
                    && p.window_end_us == p.window_start_us + WINDOW_US
            })
            .and_then(|p| Some((key_named(&p.region, &p.service)?, p)));
        // A pane of no closed window of the input, or of no key: unexpected
        // (this includes a pane of the last window, which never closed).
        let Some((key, pane, expected)) = pane.and_then(|(key, p)| {
            let expected = *self.expected.0.get(&(p.window_start_us, key))?;
            Some((key, p, expected))
        }) else {
            self.tally.unexpected += 1;
            return;
        };
        let window = pane.window_start_us;
        let copies = self.seen.entry((window, key)).or_default();
        *copies += 1;
        if *copies > 1 {
            self.tally.duplicated += 1;
        } else {
            if window >= self.owed_before {
                self.tally.beyond_commit += 1;
            }
            if self.latest_window.is_some_and(|latest| window < latest) {
                self.tally.out_of_order += 1;
            }
            self.latest_window = self.latest_window.max(Some(window));
        }
        let got = Aggregate {
            count: pane.count,
            sum_latency_ms: pane.sum_latency_ms,
            max_latency_ms: pane.max_latency_ms,
        };
        self.checked += 1;
        if got != expected {
            self.wrong += 1;
            self.tally.corrupted += 1;
        }
    }

    fn finish(&self) -> Checked {
        let e = &self.expectation;
        let mut tally = self.tally.clone();
        let owed = self
            .expected
            .0
            .keys()
            .filter(|(w, _)| *w < self.owed_before);
        let mut owed_windows = 0;
        let mut last = None;
        for pane in owed {
            tally.expected += 1;
            if !self.seen.contains_key(pane) {
                tally.missing += 1;
            }
            if last != Some(pane.0) {
                owed_windows += 1;
                last = Some(pane.0);
            }
        }
        let mut figures = BTreeMap::new();
        let seen_windows: std::collections::BTreeSet<i64> =
            self.seen.keys().map(|(w, _)| *w).collect();
        if !seen_windows.is_empty() {
            figures.insert(
                "panes_per_window".to_string(),
                self.seen.len() as f64 / seen_windows.len() as f64,
            );
        }
        if owed_windows > 0 {
            figures.insert(
                "expected_panes_per_window".to_string(),
                tally.expected as f64 / owed_windows as f64,
            );
        }
        let wording = Wording {
            unit: "panes",
            out_of_order: "late (after a pane of a later window)",
            out_of_order_fails: true,
        };
        let owed_until = WindowedLowcard.owed_until(e.pacing, e.input_records);
        Checked {
            verification: tally.finish(e, owed_until, &wording),
            content: (self.checked, self.wrong),
            figures,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Delivery;
    use crate::results::VerificationVerdict;

    const SEED: u64 = 42;
    /// 400 records/s for 3.5 s from a window boundary: windows 0, 1 and 2
    /// are closed, window 3 (the last 200 records) never closes.
    const RATE: u64 = 400;
    const N: u64 = 1400;
    const START: i64 = 10 * WINDOW_US;

    fn schedule() -> Schedule {
        Schedule::new(START, RATE)
    }

    fn expectation(committed: u64, delivery: Delivery) -> Expectation {
        Expectation {
            seed: SEED,
            input_records: N,
            committed,
            covered: None,
            partitions: 1,
            pacing: Pacing::Paced(schedule()),
            delivery,
        }
    }

    /// The panes a correct product writes, computed here the plain way:
    /// group every record by its window and key.
    fn correct_panes(records: std::ops::Range<u64>) -> Vec<serde_json::Value> {
        let mut panes: BTreeMap<(i64, &str, &str), (u64, u64, u64)> = BTreeMap::new();
        for seq in records {
            let ts = schedule().slot_us(seq);
            let core = Core::generate(SEED, seq);
            let start = ts - ts.rem_euclid(1_000_000);
            let pane = panes.entry((start, core.region, core.service)).or_default();
            pane.0 += 1;
            pane.1 += u64::from(core.latency_ms);
            pane.2 = pane.2.max(u64::from(core.latency_ms));
        }
        panes
            .into_iter()
            .map(|((start, region, service), (count, sum, max))| {
                serde_json::json!({
                    "window_start_us": start, "window_end_us": start + 1_000_000,
                    "region": region, "service": service,
                    "count": count, "sum_latency_ms": sum, "max_latency_ms": max,
                })
            })
            .collect()
    }

    fn check(e: Expectation, panes: &[serde_json::Value]) -> Checked {
        let mut verifier = WindowedLowcard.verifier(e).unwrap();
        for pane in panes {
            verifier.observe(&serde_json::to_vec(pane).unwrap());
        }
        verifier.finish()
    }

    #[test]
    fn window_boundaries_follow_the_schedule() {
        assert_eq!(window_of(START + 999_999), START);
        assert_eq!(window_of(START + 1_000_000), START + WINDOW_US);
        assert_eq!(window_of(-1), -WINDOW_US);
        // 400/s: records 0..400 fall in the first window, 400 opens the next
        assert_eq!(first_seq_from(schedule(), START + WINDOW_US), 400);
        assert_eq!(first_seq_from(schedule(), START + 3 * WINDOW_US), 1200);
        assert_eq!(first_seq_from(schedule(), START), 0);
        assert_eq!(
            WindowedLowcard.owed_until(Pacing::Paced(schedule()), N),
            1200
        );
        assert_eq!(WindowedLowcard.owed_until(Pacing::Unpaced, N), N);
    }

    #[test]
    fn the_expected_panes_on_a_fixed_seed() {
        let panes = Panes::of(SEED, schedule(), 0..1200);
        let windows: std::collections::BTreeSet<i64> = panes.0.keys().map(|k| k.0).collect();
        assert_eq!(
            windows.into_iter().collect::<Vec<_>>(),
            [START, START + WINDOW_US, START + 2 * WINDOW_US]
        );
        // every record lands in exactly one pane
        assert_eq!(panes.0.values().map(|p| p.count).sum::<u64>(), 1200);
        // 400 records a window over 42 keys: nearly every key in each
        assert!(
            panes.len() > 3 * 35 && panes.len() <= 3 * 42,
            "{}",
            panes.len()
        );
        let pinned = panes.0[&(START, key_named("eu-west", "search").unwrap())];
        let recount = correct_panes(0..400)
            .into_iter()
            .find(|p| p["region"] == "eu-west" && p["service"] == "search")
            .unwrap();
        assert_eq!(recount["count"], pinned.count);
        assert_eq!(recount["sum_latency_ms"], pinned.sum_latency_ms);
        assert_eq!(recount["max_latency_ms"], pinned.max_latency_ms);
    }

    #[test]
    fn the_closed_windows_panes_pass_and_the_open_window_owes_nothing() {
        let panes = correct_panes(0..1200);
        let checked = check(expectation(N, Delivery::ExactlyOnce), &panes);
        let v = &checked.verification;
        assert_eq!(v.verdict, VerificationVerdict::Passed, "{}", v.message);
        assert_eq!(v.expected, panes.len() as u64);
        assert_eq!(checked.content, (panes.len() as u64, 0));
        assert!(checked.figures["panes_per_window"] > 35.0);
        // a product that holds its commit at the open window's first record
        // is done too
        let held = check(expectation(1200, Delivery::ExactlyOnce), &panes);
        assert_eq!(held.verification.verdict, VerificationVerdict::Passed);
    }

    #[test]
    fn a_missing_pane_a_duplicate_a_wrong_sum_and_a_late_pane_are_each_counted() {
        let mut panes = correct_panes(0..1200);
        panes.remove(3);
        panes.push(panes[5].clone());
        panes[7]["sum_latency_ms"] =
            serde_json::json!(panes[7]["sum_latency_ms"].as_u64().unwrap() + 1);
        // the first window's last pane, moved after the second window's
        let late = panes
            .iter()
            .position(|p| p["window_start_us"] == START + WINDOW_US)
            .unwrap()
            - 1;
        let moved = panes.remove(late);
        panes.insert(late + 1, moved);
        let v = check(expectation(N, Delivery::AtLeastOnce), &panes).verification;
        assert_eq!(
            (
                v.missing,
                v.duplicated,
                v.corrupted,
                v.out_of_order,
                v.unexpected
            ),
            (1, 1, 1, 1, 0),
            "{}",
            v.message
        );
        assert_eq!(v.verdict, VerificationVerdict::Failed);
        assert!(v.message.contains("1 late"), "{}", v.message);
    }

    #[test]
    fn a_pane_of_the_open_window_or_off_the_grid_is_unexpected() {
        let mut panes = correct_panes(0..1200);
        let open = correct_panes(1200..N);
        panes.push(open[0].clone());
        let mut shifted = panes[0].clone();
        shifted["window_start_us"] = serde_json::json!(START + 1);
        shifted["window_end_us"] = serde_json::json!(START + 1 + WINDOW_US);
        panes.push(shifted);
        let mut nokey = panes[0].clone();
        nokey["region"] = "mars".into();
        panes.push(nokey);
        let v = check(expectation(N, Delivery::ExactlyOnce), &panes).verification;
        assert_eq!((v.unexpected, v.missing), (3, 0), "{}", v.message);
        assert_eq!(v.verdict, VerificationVerdict::Failed);
    }

    #[test]
    fn only_windows_before_the_commit_are_owed() {
        // committed mid-second window: only the first window is owed
        let panes = correct_panes(0..400);
        let v = check(expectation(600, Delivery::AtLeastOnce), &panes).verification;
        assert_eq!(v.missing, 0, "{}", v.message);
        assert_eq!(v.expected, panes.len() as u64);
        assert_eq!(v.verdict, VerificationVerdict::Incomplete, "{}", v.message);
    }

    #[test]
    fn unpaced_runs_cannot_be_checked() {
        let mut e = expectation(N, Delivery::AtLeastOnce);
        e.pacing = Pacing::Unpaced;
        assert!(WindowedLowcard.verifier(e.clone()).is_err());
        e.pacing = Pacing::new(START, 0);
        assert!(WindowedLowcard.verifier(e).is_err());
    }

    #[test]
    fn expected_selectivity_counts_the_panes_the_range_closes() {
        let s = Pacing::Paced(schedule());
        // records 0..1200 close windows 0 and 1 (window 2 is closed by 1200)
        let share = WindowedLowcard
            .expected_selectivity(SEED, s, 0, 1200)
            .unwrap();
        let two_windows = correct_panes(0..800).len() as f64;
        assert!((share - two_windows / 1200.0).abs() < 1e-12, "{share}");
        assert_eq!(WindowedLowcard.expected_selectivity(SEED, s, 0, 300), None);
        assert_eq!(
            WindowedLowcard.expected_selectivity(SEED, Pacing::Unpaced, 0, 1200),
            None
        );
    }
}
