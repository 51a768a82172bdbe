//! The judges on crafted series: a topic run's here, a drain's in drain.rs.

mod core;
mod drain;

use std::collections::BTreeMap;

use super::*;
use crate::analysis::window::tests::row;
use crate::analysis::window::Sample;
use crate::config::Tolerances;
use crate::gendata::schedule::Pacing;
use crate::model::gendata::GendataSummary;
use crate::model::probe::ProbeSummary;
use crate::model::probe::{LatencySummary, ProbeLag};
use crate::results::figure::{
    ADDED_P50_MS, CONSUMED_PER_S, CPU_AVG_PCT, CPU_PER_RECORD_FIRST_THIRD_US,
    CPU_PER_RECORD_LAST_THIRD_US, FLOOR_P50_MS, LAG_DRIFT, LATENCY_MAX_MS, LATENCY_P50_MS,
    LATENCY_P999_MS, LATENCY_P99_MS, MEM_AVG_MB, OFFERED_PER_S, OUTPUT_PER_S, PROBE_LAG_P99_MS,
    ROWS_PER_S_PER_CORE, RSS_AVG_MB, SLOW_SAMPLES, STALLS, USS_AVG_MB, US_CPU_PER_RECORD,
};
use crate::results::{RunConfig, Verification, VerificationVerdict};
use crate::workloads::{Checked, TopicOutput};

fn tolerances() -> Tolerances {
    Tolerances {
        lag_drift: 0.02,
        selectivity: 0.25,
        generator_behind_ms: 100.0,
        host_busy_pct: 90.0,
        offered_vs_input: 0.02,
        output_vs_consumed: 0.25,
        steady_rate: 0.05,
        steady_cpu: 0.15,
        window_thirds_cpu: 0.25,
        tie_band: 0.01,
        steal_pct: 2.0,
        outside_pct: 10.0,
        cpu_mismatch: 0.05,
    }
}

/// What a verifier found: the stateless workload's figures.
fn checked(verification: Verification, breach_rate: Option<f64>, content: (u64, u64)) -> Verified {
    Verified::Checked(Checked {
        verification,
        content,
        figures: breach_rate
            .map(|rate| BTreeMap::from([("breach_rate".to_string(), rate)]))
            .unwrap_or_default(),
    })
}

fn stateless() -> &'static dyn TopicOutput {
    match crate::workloads::find("stateless").unwrap().output() {
        crate::workloads::Output::Topic(topic) => topic,
        crate::workloads::Output::Table => unreachable!("stateless writes a topic"),
    }
}

fn config(window_s: u64) -> RunConfig {
    RunConfig {
        window_s,
        ..RunConfig::example()
    }
}

fn latency(count: u64, p50_ms: f64) -> LatencySummary {
    LatencySummary {
        count,
        p50_ms,
        p90_ms: p50_ms * 1.5,
        p99_ms: p50_ms * 2.0,
        p999_ms: p50_ms * 3.0,
        max_ms: p50_ms * 4.0,
        histogram: String::new(),
    }
}

fn gendata(window_records: u64, behind_p99_ms: f64, behind_max_ms: f64) -> GendataSummary {
    GendataSummary {
        records_sent: window_records,
        records_acked: window_records,
        delivery_errors: 0,
        window_records,
        window_first_seq: 0,
        achieved_rate: 1000.0,
        behind_p99_ms,
        behind_max_ms,
        behind_count: window_records,
    }
}

fn probe(output: u64, floor: u64) -> ProbeSummary {
    ProbeSummary {
        output: latency(output, 20.0),
        floor: latency(floor, 5.0),
        unreadable: 0,
        lag: lag(0.0),
        intervals: None,
    }
}

fn lag(trailing_p99_ms: f64) -> ProbeLag {
    ProbeLag {
        samples: 100,
        trailing_records_max: (trailing_p99_ms * 2.0) as u64,
        trailing_p99_ms,
        trailing_max_ms: trailing_p99_ms * 2.0,
        failed_queries: 0,
        query_p99_ms: 3.0,
        query_max_ms: 5.0,
    }
}

/// A crafted run: 1000/s offered, `committed_at(t)` committed at second t
/// of a `seconds` window, two warm-up samples before it.
struct Crafted {
    samples: Vec<Sample>,
    config: RunConfig,
    gendata: GendataSummary,
    probe: ProbeSummary,
    verified: Verified,
}

impl Crafted {
    fn new(seconds: usize, committed_at: impl Fn(f64) -> f64) -> Crafted {
        let samples = (0..seconds + 3)
            .map(|i| {
                let t = i as f64;
                // 50 % of one core at 100 ticks/s
                row(
                    t,
                    committed_at(t) as i64,
                    (1000.0 * t) as i64,
                    50 * i as u64,
                    10,
                )
            })
            .collect();
        let records = 1000 * seconds as u64;
        Crafted {
            samples,
            config: config(seconds as u64),
            gendata: gendata(records, 2.0, 5.0),
            probe: probe(records * 29 / 100, 1000),
            verified: checked(
                verification(VerificationVerdict::Passed),
                Some(0.2),
                (records * 29 / 100, 0),
            ),
        }
    }

    fn judge(&self) -> Judgement {
        judge(&JudgeInputs {
            samples: &self.samples,
            window_start: 2,
            offset_polls: &[],
            window_start_us: 2_000_000,
            ticks_per_s: 100.0,
            config: &self.config,
            workload: stateless(),
            pacing: Pacing::Unpaced,
            gendata: &self.gendata,
            probe: &self.probe,
            verified: &self.verified,
            settle: None,
            chaos: false,
            tolerances: &tolerances(),
        })
    }
}

fn verification(verdict: VerificationVerdict) -> Verification {
    Verification {
        committed_offset: 0,
        input_records: 10_000,
        expected: 0,
        output_records: 0,
        missing: 0,
        duplicated: 0,
        unexpected: 0,
        corrupted: 0,
        beyond_commit: 0,
        out_of_order: 0,
        verdict,
        message: String::new(),
    }
}

fn value(j: &Judgement, name: &str) -> f64 {
    j.metrics
        .get(name)
        .unwrap_or_else(|| panic!("{name} missing: {:?}", j.not_applicable))
        .value
}

#[test]
fn a_steady_product_keeps_up_and_gets_its_latency_quoted() {
    let j = Crafted::new(20, |t| 1000.0 * t - 10.0).judge();
    assert_eq!(j.regime, Some(Regime::KeepUp));
    assert!(j.failure.is_none());
    assert!((value(&j, CONSUMED_PER_S.name) - 1000.0).abs() < 1e-6);
    assert_eq!(value(&j, LATENCY_P50_MS.name), 20.0);
    assert_eq!(value(&j, ADDED_P50_MS.name), 15.0);
    assert_eq!(value(&j, LATENCY_MAX_MS.name), 80.0);
    assert!((value(&j, CPU_AVG_PCT.name) - 50.0).abs() < 1e-9);
    assert!((value(&j, US_CPU_PER_RECORD.name) - 500.0).abs() < 1e-6);
    assert!(j.flags.is_empty(), "{:?}", j.flags);
    assert_eq!(j.series.unwrap().t_s.len(), 22);
}

/// 1 s intervals of 290 records each, p99 30 ms but at `spike`.
fn latency_series(seconds: usize, spike: Option<usize>) -> crate::results::LatencySeries {
    let mut s = crate::results::LatencySeries::new(1000);
    for i in 0..seconds {
        let p99 = if spike == Some(i) { 1000.0 } else { 30.0 };
        s.t_s.push(i as f64 + 1.0);
        s.count.push(290);
        s.p50_ms.push(Some(20.0));
        s.p99_ms.push(Some(p99));
        s.max_ms.push(Some(p99));
    }
    s
}

#[test]
fn a_stall_is_counted_and_flagged_and_withholds_no_latency() {
    let mut c = Crafted::new(10, |t| 1000.0 * t - 10.0);
    c.probe.intervals = Some(latency_series(10, None));
    let j = c.judge();
    assert_eq!(value(&j, STALLS.name), 0.0);
    assert!(!j.flags.contains(&flag::STALLS));
    c.probe.intervals = Some(latency_series(10, Some(6)));
    let j = c.judge();
    assert_eq!(value(&j, STALLS.name), 1.0);
    assert_eq!(j.metrics[STALLS.name].unit, "intervals");
    assert!(j.flags.contains(&flag::STALLS), "{:?}", j.flags);
    assert_eq!(value(&j, LATENCY_P50_MS.name), 20.0);
}

#[test]
fn the_cgroups_cpu_is_the_products_and_a_gap_with_proc_is_flagged() {
    // The crafted product uses 50 % of a core by /proc; its cgroup says
    // `share` of a core over the same samples.
    let with_cgroup = |share: f64| {
        let mut c = Crafted::new(10, |t| 1000.0 * t);
        for s in c.samples.iter_mut() {
            s.product_cgroup = Some(crate::isolation::cgroup::CgroupReading {
                hierarchy: "v1",
                cpu_ns: (s.procs_at_us as f64 * 1000.0 * share) as u64,
                mem_peak_bytes: None,
            });
        }
        c.judge()
    };
    let agree = with_cgroup(0.51);
    assert!((value(&agree, CPU_AVG_PCT.name) - 51.0).abs() < 1e-6);
    assert!(
        !agree.flags.contains(&flag::CPU_MISMATCH),
        "{:?}",
        agree.flags
    );
    let account = agree.resources.unwrap().product_cgroup.unwrap();
    assert!(
        (account.proc_cpu_avg_pct - 50.0).abs() < 1e-9,
        "{account:?}"
    );
    let gap = with_cgroup(0.60);
    assert!((value(&gap, CPU_AVG_PCT.name) - 60.0).abs() < 1e-6);
    assert!(gap.flags.contains(&flag::CPU_MISMATCH), "{:?}", gap.flags);
    // Without a cgroup, the /proc figure stands and the record says why.
    let none = Crafted::new(10, |t| 1000.0 * t).judge();
    assert!((value(&none, CPU_AVG_PCT.name) - 50.0).abs() < 1e-9);
    assert!(none.not_applicable["cgroup_cpu"].contains("/proc"));
}

#[test]
fn steal_or_busy_strangers_flag_a_noisy_host() {
    let mut c = Crafted::new(10, |t| 1000.0 * t);
    assert!(!c.judge().flags.contains(&flag::NOISY_HOST));
    // 30 ticks a second of another process: 30 % of a core.
    for (i, s) in c.samples.iter_mut().enumerate() {
        s.outside = crate::sampler::TickMap::from([((0, 999, 1), 30 * i as u64)]);
    }
    let j = c.judge();
    assert!(j.flags.contains(&flag::NOISY_HOST), "{:?}", j.flags);
    let host = j.resources.unwrap().host.unwrap();
    assert!(
        (host.outside_avg_pct.unwrap() - 30.0).abs() < 1.0,
        "{host:?}"
    );
}

#[test]
fn the_products_rss_and_uss_stand_beside_its_pss() {
    // Crafted trees hold 10 MB PSS, twice that RSS, half that USS.
    let mut c = Crafted::new(10, |t| 1000.0 * t);
    let j = c.judge();
    assert_eq!(value(&j, MEM_AVG_MB.name), 10.0);
    assert_eq!(value(&j, RSS_AVG_MB.name), 20.0);
    assert_eq!(value(&j, USS_AVG_MB.name), 5.0);
    c.samples[5].product.uss_bytes = None;
    let j = c.judge();
    assert!(!j.metrics.contains_key(USS_AVG_MB.name));
    assert!(j.not_applicable[USS_AVG_MB.name].contains("smaps_rollup"));
}

#[test]
fn a_sawtooth_backlog_that_keeps_up_is_keep_up_with_coarse_commits() {
    for phase in [0.0, 0.4, 1.7, 3.2] {
        let j = Crafted::new(15, |t: f64| {
            1000.0 * (((t + phase) / 5.0).floor() * 5.0 - phase)
        })
        .judge();
        assert_eq!(
            j.regime,
            Some(Regime::KeepUp),
            "phase {phase}: {:?}",
            j.metrics
        );
        assert!(j.flags.contains(&flag::COARSE_COMMITS));
        assert!(j.metrics.contains_key(LATENCY_P50_MS.name));
    }
}

#[test]
fn slow_linear_growth_is_saturated() {
    let j = Crafted::new(30, |t| 960.0 * t).judge();
    assert_eq!(j.regime, Some(Regime::Saturated));
    assert!((value(&j, LAG_DRIFT.name) - 40.0 / 960.0).abs() < 1e-6);
    assert!(!j.metrics.contains_key(LATENCY_P50_MS.name));
    assert_eq!(
        j.not_applicable["latency"],
        "the run was saturated, not keep-up"
    );
}

#[test]
fn a_shrinking_backlog_is_draining() {
    let j = Crafted::new(10, |t| 2000.0 * t - 20_000.0).judge();
    assert_eq!(j.regime, Some(Regime::Draining));
    assert!(j.not_applicable["latency"].contains("draining"));
}

#[test]
fn a_step_in_the_committed_offset_is_inconsistent_flow_and_quotes_nothing() {
    // one commit seen, late in the window: the fit follows the step
    let j = Crafted::new(10, |t| if t < 10.5 { 2000.0 } else { 4048.0 }).judge();
    assert!(j.flags.contains(&flag::INCONSISTENT_FLOW), "{:?}", j.flags);
    for name in [
        CONSUMED_PER_S.name,
        US_CPU_PER_RECORD.name,
        ROWS_PER_S_PER_CORE.name,
    ] {
        assert!(!j.metrics.contains_key(name), "{name} quoted");
        assert!(j.not_applicable[name].contains("flow figures disagree"));
    }
    assert!(!j
        .metrics
        .keys()
        .any(|k| k.starts_with("latency_") || k.starts_with("added_")));
    assert!(j.not_applicable["flow"].contains("moved 1 time(s)"));
    assert!(j.not_applicable["flow"].contains("output/s"));
    assert!(j.metrics.contains_key(OFFERED_PER_S.name));
    assert!(j.metrics.contains_key(OUTPUT_PER_S.name));
    // the same product committing every second agrees with itself
    let j = Crafted::new(10, |t| 1000.0 * t.floor() - 10.0).judge();
    assert!(
        !j.flags.contains(&flag::INCONSISTENT_FLOW),
        "{:?}",
        j.not_applicable
    );
    assert!(j.metrics.contains_key(CONSUMED_PER_S.name));
}

#[test]
fn a_window_whose_cpu_per_record_falls_is_not_steady() {
    let mut c = Crafted::new(30, |t| 1000.0 * t - 10.0);
    assert!(!c.judge().flags.contains(&flag::NOT_STEADY));
    // CPU falling from 90 % to 40 % over the window, as a JVM compiling
    let mut ticks = 0.0;
    for (i, sample) in c.samples.iter_mut().enumerate() {
        ticks += 90.0 - 50.0 * i as f64 / 32.0;
        sample.product.ticks.insert((0, 10, 1), ticks as u64);
    }
    let j = c.judge();
    assert!(j.flags.contains(&flag::NOT_STEADY), "{:?}", j.flags);
    let (first, last) = (
        value(&j, CPU_PER_RECORD_FIRST_THIRD_US.name),
        value(&j, CPU_PER_RECORD_LAST_THIRD_US.name),
    );
    assert!(first > 1.5 * last, "{first} {last}");
}

#[test]
fn one_sample_is_a_failure_not_a_regime() {
    let mut c = Crafted::new(5, |t| 1000.0 * t);
    c.samples.truncate(3);
    let j = c.judge();
    assert_eq!(j.regime, None);
    assert!(j.failure.unwrap().contains("1 sample(s)"));
}

#[test]
fn a_restart_that_lowers_the_committed_offset_does_not_unconsume() {
    let j = Crafted::new(20, |t| {
        if (8.0..10.0).contains(&t) {
            1000.0 * t - 4000.0
        } else {
            1000.0 * t
        }
    })
    .judge();
    assert_eq!(j.regime, Some(Regime::KeepUp), "{:?}", j.metrics);
    assert!(value(&j, CONSUMED_PER_S.name) > 900.0);
}

#[test]
fn an_empty_histogram_quotes_no_latency() {
    let mut c = Crafted::new(10, |t| 1000.0 * t);
    c.probe.output = latency(0, 0.0);
    let j = c.judge();
    assert_eq!(j.regime, Some(Regime::KeepUp));
    assert!(!j.metrics.contains_key(LATENCY_P50_MS.name));
    assert!(!j.metrics.contains_key(ADDED_P50_MS.name));
    assert_eq!(
        j.not_applicable["latency"],
        "no output record arrived in the window"
    );
}

#[test]
fn a_missing_floor_leaves_latency_but_no_added() {
    let mut c = Crafted::new(10, |t| 1000.0 * t);
    c.probe.floor = latency(0, 0.0);
    let j = c.judge();
    assert_eq!(value(&j, LATENCY_P50_MS.name), 20.0);
    assert!(!j.metrics.contains_key(ADDED_P50_MS.name));
    assert!(!j.metrics.contains_key(FLOOR_P50_MS.name));
    assert_eq!(
        j.not_applicable[ADDED_P50_MS.name],
        "no floor record arrived in the window"
    );
}

#[test]
fn a_generator_behind_during_keep_up_withholds_latency() {
    let mut c = Crafted::new(10, |t| 1000.0 * t);
    c.gendata = gendata(10_000, 150.0, 300.0);
    let j = c.judge();
    assert_eq!(j.regime, Some(Regime::KeepUp));
    assert!(j.flags.contains(&flag::GENERATOR_BEHIND));
    assert!(!j.metrics.contains_key(LATENCY_P50_MS.name));
    assert!(j.not_applicable["latency"].contains("gendata fell behind"));
}

#[test]
fn a_generator_late_only_at_its_max_withholds_the_tail_alone() {
    let mut c = Crafted::new(10, |t| 1000.0 * t);
    c.gendata = gendata(10_000, 3.0, 250.0);
    let j = c.judge();
    assert!(!j.flags.contains(&flag::GENERATOR_BEHIND));
    assert_eq!(value(&j, LATENCY_P99_MS.name), 40.0);
    assert!(!j.metrics.contains_key(LATENCY_P999_MS.name));
    assert!(!j.metrics.contains_key(LATENCY_MAX_MS.name));
    assert!(j.not_applicable[LATENCY_MAX_MS.name].contains("250.0 ms"));
}

#[test]
fn an_unpaced_run_is_never_generator_behind() {
    let mut c = Crafted::new(10, |t| 1000.0 * t);
    c.config.rate = 0;
    c.gendata = gendata(10_000, 300.0, 400.0);
    let j = c.judge();
    assert!(!j.flags.contains(&flag::GENERATOR_BEHIND));
    assert!(j.metrics.contains_key(LATENCY_MAX_MS.name));
}

#[test]
fn a_probe_that_trails_the_output_quotes_no_latency() {
    let mut c = Crafted::new(10, |t| 1000.0 * t);
    c.probe.lag = lag(12.5);
    let j = c.judge();
    assert!(j.flags.contains(&flag::PROBE_BEHIND));
    assert!(!j.metrics.contains_key(LATENCY_P50_MS.name));
    assert!(j.not_applicable["latency"].contains("12.5 ms worth"));
    assert_eq!(value(&j, PROBE_LAG_P99_MS.name), 12.5);
    c.probe.lag = lag(9.0);
    let j = c.judge();
    assert!(!j.flags.contains(&flag::PROBE_BEHIND));
    assert!(j.metrics.contains_key(LATENCY_P50_MS.name));
}

#[test]
fn slow_samples_are_counted_and_flagged() {
    let mut c = Crafted::new(10, |t| 1000.0 * t);
    c.samples[5].read_us = 25_000;
    c.samples[0].read_us = 25_000; // before the window: not counted
    let j = c.judge();
    assert_eq!(value(&j, SLOW_SAMPLES.name), 1.0);
    assert!(j.flags.contains(&flag::SLOW_SAMPLES));
}

#[test]
fn verification_verdicts_become_flags() {
    let mut c = Crafted::new(10, |t| 1000.0 * t);
    c.verified = checked(verification(VerificationVerdict::Incomplete), None, (0, 0));
    let j = c.judge();
    assert!(j.flags.contains(&flag::VERIFICATION_INCOMPLETE));
    assert!(!j.flags.contains(&flag::VERIFICATION_FAILED));
    c.verified = checked(verification(VerificationVerdict::Failed), None, (0, 0));
    assert!(c.judge().flags.contains(&flag::VERIFICATION_FAILED));
}
