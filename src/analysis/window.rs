//! The measurement window as samples, and what follows from them alone: the
//! flow of records (consumed/s and lag drift, by least squares over every
//! sample), the resources of each process tree, the host's load, and the
//! per-interval series behind the charts.

use crate::results::{HostLoad, ResourceSummary, Series};
use crate::sampler::{self, MemoryInstrument, TreeReading};

use super::{mean, percentile};

/// One sample of everything, each value stamped with its own read time.
#[derive(Debug, Clone)]
pub struct Sample {
    /// When /proc was read: the CPU ticks, memory and host ticks below.
    pub procs_at_us: i64,
    /// When the product's committed input offset was read.
    pub committed_at_us: i64,
    /// The product group's committed input offset (negative: none yet).
    pub committed: i64,
    /// When the input's high watermark was read.
    pub high_at_us: i64,
    pub input_high: i64,
    /// Records on topics other than the run's own (only at the window's bounds).
    pub extra_high: Option<i64>,
    /// How long all of this sample's reads took together.
    pub read_us: i64,
    pub product: TreeReading,
    pub broker: Option<TreeReading>,
    pub gendata: TreeReading,
    pub probe: TreeReading,
    /// The local ClickHouse's tree, on an ETL run.
    pub sink: Option<TreeReading>,
    /// The host's busy and total CPU ticks.
    pub host: Option<(u64, u64)>,
}

/// One read of the product's committed offset and the input's high
/// watermark. Every sample holds one, and between samples the monitor reads
/// them ten times a second: a product committing about once a sample
/// interval would otherwise be seen at a phase that slips slowly from
/// sample to sample, which reads as a backlog trend that is not there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OffsetRead {
    /// When the committed offset was read.
    pub at_us: i64,
    /// Negative: none yet.
    pub committed: i64,
    pub input_high: i64,
}

impl From<&Sample> for OffsetRead {
    fn from(sample: &Sample) -> OffsetRead {
        OffsetRead {
            at_us: sample.committed_at_us,
            committed: sample.committed,
            input_high: sample.input_high,
        }
    }
}

/// The window's offset reads: its samples' and the polls made between its
/// first and last sample, in time order.
pub fn offset_reads(window: &[Sample], polls: &[OffsetRead]) -> Vec<OffsetRead> {
    let (Some(first), Some(last)) = (window.first(), window.last()) else {
        return Vec::new();
    };
    let mut reads: Vec<OffsetRead> = window.iter().map(OffsetRead::from).collect();
    reads.extend(
        polls
            .iter()
            .filter(|p| p.at_us > first.committed_at_us && p.at_us < last.committed_at_us),
    );
    reads.sort_by_key(|r| r.at_us);
    reads
}

/// A sample whose reads took longer than this is counted as slow: its
/// values may describe different instants.
pub const SLOW_SAMPLE_US: i64 = 20_000;

/// How records moved through the product over the window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Flow {
    /// Least-squares slope of the committed input offset, records/s.
    pub consumed_per_s: f64,
    /// Least-squares slope of the backlog, records/s.
    pub backlog_slope_per_s: f64,
    /// Least-squares slope of the input's high watermark over every read:
    /// how fast the input grew, records/s.
    pub input_per_s: f64,
    /// backlog slope x window / records consumed in the window.
    pub drift: f64,
    /// Records consumed in the window: consumed/s x window seconds.
    pub consumed: f64,
    /// The committed offset at the window's first and last sample.
    pub committed_first: u64,
    pub committed_last: u64,
    pub backlog_first: i64,
    pub backlog_last: i64,
    /// The committed offset moved in fewer than half of the intervals
    /// between reads.
    pub coarse_commits: bool,
    /// Intervals between reads in which the committed offset moved, of all.
    pub commit_moves: usize,
    pub intervals: usize,
    /// The largest single move of the committed offset between two reads:
    /// how far a sawtooth's teeth reach.
    pub largest_commit_step: u64,
}

/// The least-squares slope of `points` (x, y); None for fewer than two
/// distinct x values.
pub fn slope(points: &[(f64, f64)]) -> Option<f64> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// The flow over a window's offset reads (both bounds included), which was
/// planned to last `window_s` seconds; None with fewer than two reads.
///
/// A committed offset that goes back (a restarted product committing an
/// older position) does not un-consume records: the running maximum is used.
/// When commits are coarse, the backlog is a sawtooth: it climbs between
/// commits and drops at each. A fit over every read then follows the teeth
/// as much as the trend, so the fit uses the reads at which a new commit
/// was first seen, the sawtooth's lows, as long as there are two of them.
pub fn flow(reads: &[OffsetRead], window_s: f64) -> Option<Flow> {
    if reads.len() < 2 {
        return None;
    }
    let mut committed = Vec::with_capacity(reads.len());
    let mut high = 0i64;
    for r in reads {
        high = high.max(r.committed.max(0));
        committed.push(high);
    }
    let intervals = reads.len() - 1;
    let moved: Vec<usize> = (1..reads.len())
        .filter(|&i| committed[i] > committed[i - 1])
        .collect();
    let coarse_commits = moved.len() * 2 < intervals;
    let picked: Vec<usize> = if coarse_commits && moved.len() >= 2 {
        moved.clone()
    } else {
        (0..reads.len()).collect()
    };
    let t0 = reads[0].at_us;
    let at = |i: usize| (reads[i].at_us - t0) as f64 / 1e6;
    let backlog = |i: usize| reads[i].input_high - committed[i];
    let consumed_per_s = slope(
        &picked
            .iter()
            .map(|&i| (at(i), committed[i] as f64))
            .collect::<Vec<_>>(),
    )?
    .max(0.0);
    let backlog_slope_per_s = slope(
        &picked
            .iter()
            .map(|&i| (at(i), backlog(i) as f64))
            .collect::<Vec<_>>(),
    )?;
    let input_per_s = slope(
        &(0..reads.len())
            .map(|i| (at(i), reads[i].input_high as f64))
            .collect::<Vec<_>>(),
    )?;
    let largest_commit_step = moved
        .iter()
        .map(|&i| (committed[i] - committed[i - 1]) as u64)
        .max()
        .unwrap_or(0);
    let consumed = consumed_per_s * window_s;
    let last = reads.len() - 1;
    Some(Flow {
        consumed_per_s,
        backlog_slope_per_s,
        input_per_s,
        drift: lag_drift(backlog_slope_per_s * window_s, consumed),
        consumed,
        committed_first: committed[0] as u64,
        committed_last: committed[last] as u64,
        backlog_first: backlog(0),
        backlog_last: backlog(last),
        coarse_commits,
        commit_moves: moved.len(),
        intervals,
        largest_commit_step,
    })
}

/// Backlog growth over the window / records consumed in it. With nothing
/// consumed, the growth itself (over one record), so a stalled product with
/// a growing backlog reads as saturated.
pub fn lag_drift(backlog_growth: f64, consumed: f64) -> f64 {
    backlog_growth / consumed.max(1.0)
}

const MB: f64 = 1024.0 * 1024.0;

/// The CPU of `pick`'s tree per interval of `rows`, each divided by its own
/// interval between /proc reads.
fn cpu_per_interval(
    rows: &[Sample],
    ticks_per_s: f64,
    pick: &impl Fn(&Sample) -> Option<&TreeReading>,
) -> Vec<f64> {
    rows.windows(2)
        .filter_map(|pair| {
            let (before, after) = (pick(&pair[0])?, pick(&pair[1])?);
            let wall_s = (pair[1].procs_at_us - pair[0].procs_at_us) as f64 / 1e6;
            Some(sampler::cpu_pct(
                &before.ticks,
                &after.ticks,
                wall_s,
                ticks_per_s,
            ))
        })
        .collect()
}

/// The largest of `values`, 0 for none.
fn max(values: &[f64]) -> f64 {
    values.iter().copied().fold(0.0, f64::max)
}

/// Resources of the tree `pick` selects, over `rows` (the window, bounds included).
pub fn summarize(
    rows: &[Sample],
    ticks_per_s: f64,
    pick: impl Fn(&Sample) -> Option<&TreeReading>,
) -> Option<ResourceSummary> {
    let cpu = cpu_per_interval(rows, ticks_per_s, &pick);
    let readings: Vec<&TreeReading> = rows.iter().filter_map(&pick).collect();
    let memory: Vec<f64> = readings
        .iter()
        .map(|r| r.memory_bytes as f64 / MB)
        .collect();
    let rss: Vec<f64> = readings.iter().map(|r| r.rss_bytes as f64 / MB).collect();
    // USS only where every sample read it: like the instrument, one gap
    // would leave an average of part of the window.
    let uss: Option<Vec<f64>> = readings
        .iter()
        .map(|r| r.uss_bytes.map(|b| b as f64 / MB))
        .collect();
    let instrument = if readings
        .iter()
        .all(|r| r.instrument == MemoryInstrument::Pss)
    {
        MemoryInstrument::Pss
    } else {
        MemoryInstrument::Rss
    };
    Some(ResourceSummary {
        cpu_avg_pct: mean(&cpu)?,
        cpu_p95_pct: percentile(&cpu, 0.95)?,
        mem_avg_mb: mean(&memory)?,
        mem_max_mb: max(&memory),
        rss_avg_mb: mean(&rss),
        rss_max_mb: Some(max(&rss)),
        uss_avg_mb: uss.as_deref().and_then(mean),
        uss_max_mb: uss.as_deref().map(max),
        samples: cpu.len(),
        instrument,
    })
}

/// The host's busy share per interval over `rows`.
pub fn host_load(rows: &[Sample]) -> Option<HostLoad> {
    let busy: Vec<f64> = rows
        .windows(2)
        .filter_map(|pair| {
            let ((b0, t0), (b1, t1)) = (pair[0].host?, pair[1].host?);
            (t1 > t0).then(|| (b1 - b0) as f64 / (t1 - t0) as f64 * 100.0)
        })
        .collect();
    Some(HostLoad {
        busy_avg_pct: mean(&busy)?,
        busy_max_pct: max(&busy),
    })
}

/// Samples of `rows` whose reads took longer than [`SLOW_SAMPLE_US`].
pub fn slow_samples(rows: &[Sample]) -> usize {
    rows.iter().filter(|s| s.read_us > SLOW_SAMPLE_US).count()
}

/// The series of `rows`, with time measured from `window_start_us`. Each
/// rate is divided by the interval between the reads it comes from.
pub fn series(rows: &[Sample], window_start_us: i64, ticks_per_s: f64) -> Series {
    let mut s = Series {
        t_s: Vec::new(),
        offered_per_s: Vec::new(),
        consumed_per_s: Vec::new(),
        backlog: Vec::new(),
        product_cpu_pct: Vec::new(),
        product_mem_mb: Vec::new(),
    };
    let per_s = |delta: i64, from_us: i64, to_us: i64| {
        let dt = (to_us - from_us) as f64 / 1e6;
        if dt > 0.0 {
            delta as f64 / dt
        } else {
            0.0
        }
    };
    for pair in rows.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let dt = (b.procs_at_us - a.procs_at_us) as f64 / 1e6;
        if dt <= 0.0 {
            continue;
        }
        s.t_s
            .push(((b.committed_at_us - window_start_us) as f64 / 1e6 * 1000.0).round() / 1000.0);
        s.offered_per_s.push(per_s(
            b.input_high - a.input_high,
            a.high_at_us,
            b.high_at_us,
        ));
        s.consumed_per_s.push(per_s(
            b.committed - a.committed,
            a.committed_at_us,
            b.committed_at_us,
        ));
        s.backlog.push(b.input_high - b.committed);
        s.product_cpu_pct.push(sampler::cpu_pct(
            &a.product.ticks,
            &b.product.ticks,
            dt,
            ticks_per_s,
        ));
        s.product_mem_mb.push(b.product.memory_bytes as f64 / MB);
    }
    s
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::sampler::TickMap;

    /// A tree of `mb` MB PSS, twice that RSS and half that USS.
    pub(crate) fn reading(ticks: u64, mb: u64, instrument: MemoryInstrument) -> TreeReading {
        TreeReading {
            ticks: TickMap::from([((10, 1), ticks)]),
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
            host: Some(((at_s * 100.0) as u64, (at_s * 200.0) as u64)),
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
        let host = host_load(&rows).unwrap();
        assert!((host.busy_avg_pct - 50.0).abs() < 1e-9);
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
}
