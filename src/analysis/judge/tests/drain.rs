//! The drain judge on crafted drains.

use super::*;
use crate::analysis::judge::drain::drain_size_for;
use crate::analysis::judge::output_capacity;
use crate::results::figure::{
    CONSUMED_PER_S, CPU_AVG_PCT, DRAIN_CAPACITY_PER_S, DRAIN_FIRST_COMMIT_S, DRAIN_S, LAG_DRIFT,
    OFFERED_PER_S, ROWS_PER_S_PER_CORE,
};
use crate::results::Better;

/// A crafted drain of `records` at 100k/s: ready at 0 s, the first
/// commit at 3 s, a commit every 10 ms after it, polls every 20 ms up to
/// `until_s`; samples every second at 100 % of one core while draining.
struct CraftedDrain {
    records: u64,
    progress: Vec<(i64, i64)>,
    /// Empty unless a test sets it: the output's progress is then unknown.
    output_progress: Vec<(i64, i64)>,
    samples: Vec<Sample>,
    config: RunConfig,
    prefill: GendataSummary,
    verified: Verified,
}

impl CraftedDrain {
    fn new(records: u64, until_s: f64) -> CraftedDrain {
        let committed_at = |t: f64| -> i64 {
            if t < 3.0 {
                -1001
            } else {
                let t = (t * 100.0).floor() / 100.0; // commits every 10 ms
                ((t - 3.0) * 100_000.0).round().min(records as f64) as i64
            }
        };
        let polls = (until_s / 0.02).round() as i64;
        let progress = (0..=polls)
            .map(|k| (k * 20_000, committed_at(k as f64 * 0.02)))
            .collect();
        let samples = (0..=until_s.floor() as usize)
            .map(|i| {
                let t = i as f64;
                let busy = (t - 3.0).clamp(0.0, 5.0) as u64 * 100;
                row(t, committed_at(t), records as i64, busy, 10)
            })
            .collect();
        let mut config = config(0);
        config.rate = 0;
        config.warmup_s = 0;
        config.drain_records = Some(records);
        let mut prefill = gendata(records, 900.0, 1500.0);
        prefill.records_acked = records;
        let mut verified = verification(VerificationVerdict::Passed);
        verified.committed_offset = records;
        verified.input_records = records;
        verified.output_records = records * 29 / 100;
        CraftedDrain {
            records,
            progress,
            output_progress: Vec::new(),
            samples,
            config,
            prefill,
            verified: checked(verified, Some(0.2), (1000, 0)),
        }
    }

    fn judge(&self) -> Judgement {
        judge_drain(&DrainInputs {
            records: self.records,
            ready_us: 0,
            progress: &self.progress,
            output_progress: &self.output_progress,
            samples: &self.samples,
            ticks_per_s: 100.0,
            config: &self.config,
            workload: stateless(),
            prefill: &self.prefill,
            verified: &self.verified,
            bound_s: 60.0,
            tolerances: &tolerances(),
        })
    }
}

#[test]
fn a_drain_is_timed_from_the_first_commit_seen_to_the_last() {
    let j = CraftedDrain::new(500_000, 10.0).judge();
    assert!(j.failure.is_none(), "{:?}", j.failure);
    assert_eq!(j.regime, Some(Regime::Draining));
    // first commit seen at 3.02 s (2000 records), the last at 8.00 s
    let expected = (500_000.0 - 2000.0) / (8.0 - 3.02);
    assert!((value(&j, DRAIN_CAPACITY_PER_S.name) - expected).abs() < 1e-6);
    assert!((value(&j, DRAIN_FIRST_COMMIT_S.name) - 3.02).abs() < 1e-9);
    assert!((value(&j, DRAIN_S.name) - 4.98).abs() < 1e-9);
    let slope = value(&j, CONSUMED_PER_S.name);
    assert!((slope - 100_000.0).abs() < 1.0, "{slope}");
    assert!((value(&j, CPU_AVG_PCT.name) - 100.0).abs() < 1e-9);
    assert!((value(&j, ROWS_PER_S_PER_CORE.name) - expected).abs() < 1e-6);
    assert_eq!(j.metrics[DRAIN_CAPACITY_PER_S.name].better, Better::Higher);
}

#[test]
fn a_drain_quotes_no_latency_and_is_never_generator_behind() {
    // the pre-fill was 900 ms "late" at p99: unpaced, that means nothing
    let j = CraftedDrain::new(500_000, 10.0).judge();
    assert!(j.flags.is_empty(), "{:?}", j.flags);
    assert!(j.sanity.is_some_and(|s| s.verdict == SanityVerdict::Ok));
    assert!(!j.metrics.keys().any(|k| k.starts_with("latency")));
    assert!(j.not_applicable["latency"].contains("no schedule"));
    assert!(!j.metrics.contains_key(OFFERED_PER_S.name));
    assert!(!j.metrics.contains_key(LAG_DRIFT.name));
}

#[test]
fn a_drain_that_runs_out_of_time_quotes_no_capacity() {
    let j = CraftedDrain::new(500_000, 6.0).judge();
    assert!(!j.metrics.contains_key(DRAIN_CAPACITY_PER_S.name));
    assert!(!j.metrics.contains_key(DRAIN_S.name));
    let why = &j.not_applicable[DRAIN_CAPACITY_PER_S.name];
    assert!(why.contains("300000 of 500000"), "{why}");
    assert!(j.metrics.contains_key(CONSUMED_PER_S.name));
}

#[test]
fn a_drain_committed_in_one_go_quotes_no_capacity() {
    let mut d = CraftedDrain::new(500_000, 10.0);
    for (at, c) in d.progress.iter_mut() {
        *c = if *at >= 5_000_000 { 500_000 } else { -1001 };
    }
    let j = d.judge();
    let why = &j.not_applicable[DRAIN_CAPACITY_PER_S.name];
    assert!(why.contains("use --drain 5000000 or more"), "{why}");
    assert!(
        !j.metrics.contains_key(DRAIN_S.name),
        "no drain time of 0 s"
    );
    assert_eq!(&j.not_applicable[DRAIN_S.name], why);
    d.progress.iter_mut().for_each(|p| p.1 = -1001);
    let j = d.judge();
    assert!(j.not_applicable[DRAIN_CAPACITY_PER_S.name].contains("committed nothing"));
    assert!(!j.metrics.contains_key(DRAIN_FIRST_COMMIT_S.name));
}

#[test]
fn a_drain_over_too_few_commits_names_the_size_that_would_measure() {
    // 200,000 records, commits every second: the first at 3 s covers
    // 50,000, the next at 4 s the rest.
    let mut d = CraftedDrain::new(200_000, 10.0);
    for (at, c) in d.progress.iter_mut() {
        *c = match *at {
            t if t < 3_000_000 => -1001,
            t if t < 4_000_000 => 50_000,
            _ => 200_000,
        };
    }
    d.config.commit_interval_ms = 1000;
    let span = drain_span(&d.progress, 200_000).unwrap();
    assert_eq!(span.commits, 1);
    let j = d.judge();
    let why = &j.not_applicable[DRAIN_CAPACITY_PER_S.name];
    assert!(why.contains("1 commit(s)"), "{why}");
    assert!(why.contains("use --drain 1500000 or more"), "{why}");
    assert!(!j.metrics.contains_key(DRAIN_S.name));
}

#[test]
fn a_drain_over_too_few_commits_is_timed_by_its_output() {
    // 1,000,000 records at 400k/s from 3 s: two commits a second apart
    // (too few), but the output, 29 % of the input, grows at every poll.
    let records = 1_000_000u64;
    let mut d = CraftedDrain::new(records, 10.0);
    let read_by = |t: f64| ((t - 3.0).max(0.0) * 400_000.0).min(records as f64);
    for (at, c) in d.progress.iter_mut() {
        let t = *at as f64 / 1e6;
        *c = if t < 4.0 {
            -1001
        } else if t < 5.0 {
            400_000
        } else {
            records as i64
        };
    }
    d.config.commit_interval_ms = 1000;
    d.output_progress = d
        .progress
        .iter()
        .map(|&(at, _)| (at, (read_by(at as f64 / 1e6) * 0.29) as i64))
        .collect();
    let j = d.judge();
    let capacity = value(&j, DRAIN_CAPACITY_PER_S.name);
    assert!(
        (capacity - 400_000.0).abs() / 400_000.0 < 0.02,
        "{capacity}"
    );
    // Without the output's progress, the commits alone are too few.
    d.output_progress.clear();
    let why = &d.judge().not_applicable[DRAIN_CAPACITY_PER_S.name];
    assert!(
        why.contains("commit(s)") && why.contains("by the output"),
        "{why}"
    );
}

#[test]
fn output_that_barely_moves_times_no_drain() {
    let polls: Vec<(i64, i64)> = (0..10)
        .map(|k| (k * 20_000, if k < 7 { 0 } else { 100 }))
        .collect();
    let why = output_capacity(&polls, 1000).unwrap_err();
    assert!(why.contains("too few"), "{why}");
    assert!(output_capacity(&[(0, 0), (20_000, 0)], 1000)
        .unwrap_err()
        .contains("no output"));
}

#[test]
fn drain_sizes_are_rounded_up_to_two_digits() {
    assert_eq!(drain_size_for(437_000.0, 1.0), 4_400_000);
    assert_eq!(drain_size_for(150_000.0, 1.0), 1_500_000);
    assert_eq!(drain_size_for(3.0, 0.01), 1);
}

#[test]
fn a_short_prefill_fails_the_drain() {
    let mut d = CraftedDrain::new(500_000, 10.0);
    d.prefill.records_acked = 499_000;
    let j = d.judge();
    assert!(j.failure.unwrap().contains("499000 of 500000"));
}
