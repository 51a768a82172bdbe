//! The checks of window.

use super::*;
use crate::sampler::TickMap;

/// A tree of `mb` MB PSS, twice that RSS and half that USS.
pub(crate) fn reading(ticks: u64, mb: u64, instrument: MemoryInstrument) -> TreeReading {
    TreeReading {
        ticks: TickMap::from([((0, 10, 1), ticks)]),
        memory_bytes: mb * 1024 * 1024,
        instrument,
        rss_bytes: 2 * mb * 1024 * 1024,
        uss_bytes: Some(mb * 512 * 1024),
        processes: 1,
    }
}

/// A sample at `at_s` whose reads all happened at once.
pub(crate) fn row(
    at_s: f64,
    committed: i64,
    input_high: i64,
    product_ticks: u64,
    mb: u64,
) -> Sample {
    let at_us = (at_s * 1e6) as i64;
    Sample {
        procs_at_us: at_us,
        committed_at_us: at_us,
        committed,
        high_at_us: at_us,
        input_high,
        extra_high: None,
        read_us: 1_000,
        product: reading(product_ticks, mb, MemoryInstrument::Pss),
        broker: None,
        gendata: reading(0, 1, MemoryInstrument::Pss),
        probe: reading(0, 1, MemoryInstrument::Pss),
        sink: None,
        host: Some(HostTicks {
            busy: (at_s * 100.0) as u64,
            total: (at_s * 200.0) as u64,
            steal: 0,
        }),
        // 1 % of a core outside the run, a quiet host's.
        outside: TickMap::from([((0, 77, 1), at_s as u64)]),
        product_cgroup: None,
        product_cpus: Vec::new(),
    }
}

#[test]
fn slope_is_least_squares() {
    assert_eq!(slope(&[]), None);
    assert_eq!(slope(&[(1.0, 5.0)]), None);
    assert_eq!(slope(&[(1.0, 5.0), (1.0, 6.0)]), None);
    let line: Vec<(f64, f64)> = (0..10).map(|x| (x as f64, 3.0 * x as f64 + 7.0)).collect();
    assert!((slope(&line).unwrap() - 3.0).abs() < 1e-12);
    // symmetric noise around a line leaves the slope alone
    let noisy = [(0.0, 1.0), (1.0, -1.0), (2.0, 1.0), (3.0, -1.0)];
    assert!((slope(&noisy).unwrap() + 0.4).abs() < 1e-12);
}

#[test]
fn drift_is_backlog_growth_per_record_consumed() {
    assert_eq!(lag_drift(0.0, 10_000.0), 0.0);
    assert!((lag_drift(1000.0, 10_000.0) - 0.1).abs() < 1e-12);
    assert!((lag_drift(-5000.0, 10_000.0) + 0.5).abs() < 1e-12);
    // nothing consumed while the backlog grew: saturated, not a division by zero
    assert_eq!(lag_drift(500.0, 0.0), 500.0);
}

fn reads(window: &[Sample]) -> Vec<OffsetRead> {
    offset_reads(window, &[])
}

/// A product committing every 1.03 s, all it has read: sampled once a
/// second, each sample finds it 0.03 s later in its cycle than the one
/// before, a backlog that seems to shrink (or, past the wrap, to jump).
/// The polls between samples see each commit within 0.1 s.
#[test]
fn commits_about_once_a_sample_are_judged_from_the_polls_between_samples() {
    let commit_period = 1.03;
    let committed_at = |t: f64| 10_000.0 * ((t / commit_period).floor() * commit_period);
    let w = window(10, 10_000.0, committed_at);
    let from_samples = flow(&reads(&w), 10.0).unwrap();
    assert!(from_samples.drift.abs() > 0.02, "{from_samples:?}");
    let polls: Vec<OffsetRead> = (1..100)
        .map(|i| {
            let t = 100.0 + i as f64 / 10.0;
            OffsetRead {
                at_us: (t * 1e6) as i64,
                committed: committed_at(t) as i64,
                input_high: (10_000.0 * t) as i64,
            }
        })
        .collect();
    let with_polls = flow(&offset_reads(&w, &polls), 10.0).unwrap();
    assert!(with_polls.coarse_commits, "{with_polls:?}");
    assert!(with_polls.drift.abs() < 0.02, "{with_polls:?}");
    assert!(
        (with_polls.consumed_per_s - 10_000.0).abs() < 200.0,
        "{with_polls:?}"
    );
}

/// rate records/s offered; committed follows `committed_at(t)`.
fn window(seconds: usize, rate: f64, committed_at: impl Fn(f64) -> f64) -> Vec<Sample> {
    (0..=seconds)
        .map(|i| {
            let t = 100.0 + i as f64;
            row(t, committed_at(t) as i64, (rate * t) as i64, 0, 1)
        })
        .collect()
}

#[test]
fn a_steady_product_keeps_a_flat_backlog() {
    let w = window(30, 10_000.0, |t| 10_000.0 * (t - 0.02));
    let f = flow(&reads(&w), 30.0).unwrap();
    assert!((f.consumed_per_s - 10_000.0).abs() < 1.0, "{f:?}");
    assert!(f.drift.abs() < 1e-6, "{f:?}");
    assert!(!f.coarse_commits);
    assert_eq!((f.commit_moves, f.intervals), (30, 30));
}

#[test]
fn a_sawtooth_backlog_from_commits_every_five_seconds_is_flat_in_every_phase() {
    for tenth in 0..50 {
        let phase = tenth as f64 / 10.0;
        // commits every 5 s, each covering all input up to that moment
        let w = window(15, 10_000.0, |t| {
            10_000.0 * (((t + phase) / 5.0).floor() * 5.0 - phase)
        });
        let f = flow(&reads(&w), 15.0).unwrap();
        assert!(f.coarse_commits, "phase {phase}: {f:?}");
        assert!(f.drift.abs() < 0.02, "phase {phase}: {f:?}");
        assert!(
            (f.consumed_per_s - 10_000.0).abs() < 100.0,
            "phase {phase}: {f:?}"
        );
    }
}

#[test]
fn a_fit_over_every_sample_would_misjudge_the_same_sawtooth() {
    // Why the lows are used: all 16 samples of a 5 s sawtooth give a
    // backlog slope of +-4 % of the rate, depending on the phase.
    let w = window(15, 10_000.0, |t| 10_000.0 * ((t / 5.0).floor() * 5.0));
    let all: Vec<(f64, f64)> = w
        .iter()
        .map(|s| {
            (
                s.committed_at_us as f64 / 1e6,
                (s.input_high - s.committed) as f64,
            )
        })
        .collect();
    let naive = slope(&all).unwrap() / 10_000.0;
    assert!(naive.abs() > 0.02, "{naive}");
}

#[test]
fn a_slow_product_grows_its_backlog() {
    // 3 % short of the rate, committing every second
    let w = window(30, 10_000.0, |t| 9_700.0 * t);
    let f = flow(&reads(&w), 30.0).unwrap();
    assert!((f.drift - 300.0 / 9_700.0).abs() < 1e-6, "{f:?}");
    assert!((f.consumed_per_s - 9_700.0).abs() < 1e-6);
}

#[test]
fn a_draining_product_shrinks_its_backlog() {
    // 20k/s through a backlog of 100k at 10k/s offered
    let w = window(10, 10_000.0, |t| 20_000.0 * t - 1_100_000.0);
    let f = flow(&reads(&w), 10.0).unwrap();
    assert!((f.drift + 0.5).abs() < 1e-6, "{f:?}");
}

#[test]
fn one_sample_is_no_flow() {
    assert!(flow(&reads(&window(0, 10.0, |t| t)), 1.0).is_none());
}

#[test]
fn a_product_that_never_commits_has_no_consumption() {
    let w = window(10, 1_000.0, |_| -1001.0);
    let f = flow(&reads(&w), 10.0).unwrap();
    assert_eq!(f.consumed_per_s, 0.0);
    assert_eq!(f.commit_moves, 0);
    assert!(f.coarse_commits);
    assert!(f.drift > 1000.0, "{f:?}");
}

#[test]
fn a_committed_offset_that_goes_back_does_not_unconsume() {
    // a restarted product commits an older position at t=105, then catches up
    let w = window(10, 1_000.0, |t| {
        if (105.0..107.0).contains(&t) {
            1_000.0 * t - 3_000.0
        } else {
            1_000.0 * t
        }
    });
    let f = flow(&reads(&w), 10.0).unwrap();
    assert_eq!(f.committed_last, 110_000);
    assert!(
        f.consumed_per_s > 900.0 && f.consumed_per_s < 1_100.0,
        "{f:?}"
    );
    assert!(f.drift.abs() < 0.02, "{f:?}");
}

#[test]
fn resources_divide_each_interval_by_its_own_read_times() {
    // 100 ticks/s: 50 ticks over 1 s = 50 %, then 150 ticks over 0.5 s = 300 %.
    let mut rows = vec![
        row(0.0, 0, 0, 0, 100),
        row(1.0, 10, 10, 50, 200),
        row(2.0, 20, 20, 200, 300),
    ];
    rows[2].procs_at_us = 1_500_000;
    let r = summarize(&rows, 100.0, |r| Some(&r.product)).unwrap();
    assert_eq!(r.samples, 2);
    assert!((r.cpu_avg_pct - 175.0).abs() < 1e-9, "{r:?}");
    assert!((r.cpu_p95_pct - 300.0).abs() < 1e-9);
    assert!((r.mem_avg_mb - 200.0).abs() < 1e-9);
    assert!((r.mem_max_mb - 300.0).abs() < 1e-9);
    assert_eq!(r.rss_avg_mb, Some(400.0));
    assert_eq!(r.rss_max_mb, Some(600.0));
    assert_eq!(r.uss_avg_mb, Some(100.0));
    assert_eq!(r.uss_max_mb, Some(150.0));
    assert_eq!(r.instrument, MemoryInstrument::Pss);
    assert!(summarize(&rows, 100.0, |r| r.broker.as_ref()).is_none());
    let host = host_load(&rows, 100.0).unwrap();
    assert!((host.busy_avg_pct - 50.0).abs() < 1e-9);
}

#[test]
fn the_hosts_steal_and_the_cpu_outside_the_run_are_averaged() {
    let mut rows = vec![
        row(0.0, 0, 0, 0, 1),
        row(1.0, 0, 0, 0, 1),
        row(2.0, 0, 0, 0, 1),
    ];
    for (i, r) in rows.iter_mut().enumerate() {
        let at_s = i as u64;
        r.host = r.host.map(|h| HostTicks {
            steal: at_s * 10,
            ..h
        });
        r.outside = TickMap::from([((0, 77, 1), at_s * 20)]);
    }
    let host = host_load(&rows, 100.0).unwrap();
    // 10 of every 200 ticks stolen; 20 ticks a second outside at 100 ticks/s.
    assert!((host.steal_avg_pct.unwrap() - 5.0).abs() < 1e-9, "{host:?}");
    assert!(
        (host.outside_avg_pct.unwrap() - 20.0).abs() < 1e-9,
        "{host:?}"
    );
}

#[test]
fn the_cgroup_account_spans_the_windows_bounds() {
    let reading = |cpu_ns, peak| crate::isolation::cgroup::CgroupReading {
        hierarchy: "v1",
        cpu_ns,
        mem_peak_bytes: Some(peak),
    };
    let mut rows = vec![
        row(0.0, 0, 0, 0, 1),
        row(1.0, 0, 0, 0, 1),
        row(2.0, 0, 0, 0, 1),
    ];
    assert_eq!(cgroup_account(&rows, 40.0), None);
    rows[0].product_cgroup = Some(reading(1_000_000_000, 10 << 20));
    rows[1].product_cgroup = Some(reading(1_300_000_000, 30 << 20));
    rows[2].product_cgroup = Some(reading(1_900_000_000, 20 << 20));
    // 0.9 s of CPU over 2 s.
    let account = cgroup_account(&rows, 40.0).unwrap();
    assert!((account.cpu_avg_pct - 45.0).abs() < 1e-9, "{account:?}");
    assert_eq!(account.proc_cpu_avg_pct, 40.0);
    assert_eq!(account.mem_peak_mb, Some(30.0));
    assert_eq!(account.hierarchy, "v1");
    // A bound without a reading gives no account.
    rows[2].product_cgroup = None;
    assert_eq!(cgroup_account(&rows, 40.0), None);
}

#[test]
fn one_rss_sample_makes_the_instrument_rss() {
    let mut rows = vec![row(0.0, 0, 0, 0, 100), row(1.0, 0, 0, 0, 100)];
    rows[1].product.instrument = MemoryInstrument::Rss;
    let r = summarize(&rows, 100.0, |r| Some(&r.product)).unwrap();
    assert_eq!(r.instrument, MemoryInstrument::Rss);
}

#[test]
fn one_sample_without_uss_leaves_uss_out_and_rss_in() {
    let mut rows = vec![row(0.0, 0, 0, 0, 100), row(1.0, 0, 0, 0, 300)];
    rows[1].product.uss_bytes = None;
    let r = summarize(&rows, 100.0, |r| Some(&r.product)).unwrap();
    assert_eq!((r.uss_avg_mb, r.uss_max_mb), (None, None));
    assert_eq!((r.rss_avg_mb, r.rss_max_mb), (Some(400.0), Some(600.0)));
    assert!((r.mem_avg_mb - 200.0).abs() < 1e-9);
}

#[test]
fn slow_samples_are_counted() {
    let mut rows = vec![row(0.0, 0, 0, 0, 1), row(1.0, 0, 0, 0, 1)];
    assert_eq!(slow_samples(&rows), 0);
    rows[1].read_us = SLOW_SAMPLE_US + 1;
    assert_eq!(slow_samples(&rows), 1);
}

#[test]
fn series_are_rates_per_interval() {
    let rows = vec![
        row(-1.0, 0, 100, 0, 5),
        row(0.0, 50, 300, 10, 6),
        row(2.0, 450, 700, 30, 7),
    ];
    let s = series(&rows, 0, 100.0);
    assert_eq!(s.t_s, vec![0.0, 2.0]);
    assert_eq!(s.offered_per_s, vec![200.0, 200.0]);
    assert_eq!(s.consumed_per_s, vec![50.0, 200.0]);
    assert_eq!(s.backlog, vec![250, 250]);
    assert_eq!(s.product_cpu_pct, vec![10.0, 10.0]);
    assert_eq!(s.product_mem_mb, vec![6.0, 7.0]);
}
