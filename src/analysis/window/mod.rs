//! The measurement window as samples, and what follows from them alone: the
//! flow of records (consumed/s and lag drift, by least squares over every
//! sample), the resources of each process tree, the host's load, and the
//! per-interval series behind the charts.

use crate::isolation::cgroup::CgroupReading;
use crate::results::{CgroupAccount, HostLoad, ResourceSummary, Series};
use crate::sampler::{self, HostTicks, MemoryInstrument, TickMap, TreeReading};

use crate::stats::{mean, percentile};

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
    /// The host's CPU ticks.
    pub host: Option<HostTicks>,
    /// The ticks of every process that is none of the run's, from the same
    /// /proc snapshot.
    pub outside: TickMap,
    /// The product's cgroup counters, read right after that snapshot;
    /// None where the product has no cgroup.
    pub product_cgroup: Option<CgroupReading>,
    /// Each distinct CPU list the product's processes were allowed.
    pub product_cpus: Vec<String>,
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
    pick: &impl Fn(&Sample) -> Option<&TickMap>,
) -> Vec<f64> {
    rows.windows(2)
        .filter_map(|pair| {
            let (before, after) = (pick(&pair[0])?, pick(&pair[1])?);
            let wall_s = (pair[1].procs_at_us - pair[0].procs_at_us) as f64 / 1e6;
            Some(sampler::cpu_pct(before, after, wall_s, ticks_per_s))
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
    let cpu = cpu_per_interval(rows, ticks_per_s, &|s: &Sample| pick(s).map(|r| &r.ticks));
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
        processes_max: readings.iter().map(|r| r.processes).max(),
    })
}

/// The host's busy and stolen shares per interval over `rows`, and the
/// CPU of the processes that are none of the run's.
pub fn host_load(rows: &[Sample], ticks_per_s: f64) -> Option<HostLoad> {
    let shares = |part: fn(&HostTicks) -> u64| -> Vec<f64> {
        rows.windows(2)
            .filter_map(|pair| {
                let (before, after) = (pair[0].host?, pair[1].host?);
                let total = after.total.checked_sub(before.total)?;
                (total > 0).then(|| {
                    part(&after).saturating_sub(part(&before)) as f64 / total as f64 * 100.0
                })
            })
            .collect()
    };
    let busy = shares(|t| t.busy);
    let outside = cpu_per_interval(rows, ticks_per_s, &|s: &Sample| Some(&s.outside));
    Some(HostLoad {
        busy_avg_pct: mean(&busy)?,
        busy_max_pct: max(&busy),
        steal_avg_pct: mean(&shares(|t| t.steal)),
        outside_avg_pct: mean(&outside),
    })
}

/// The product's cgroup over `rows` (the window, bounds included): its CPU
/// between the first and the last sample, beside the /proc figure
/// `proc_cpu_avg_pct` of the same samples; None unless both bounds read it.
pub fn cgroup_account(rows: &[Sample], proc_cpu_avg_pct: f64) -> Option<CgroupAccount> {
    let (first, last) = (rows.first()?, rows.last()?);
    let (before, after) = (first.product_cgroup?, last.product_cgroup?);
    let wall_ns = (last.procs_at_us - first.procs_at_us) as f64 * 1000.0;
    (wall_ns > 0.0).then(|| CgroupAccount {
        hierarchy: after.hierarchy.to_string(),
        cpu_avg_pct: after.cpu_ns.saturating_sub(before.cpu_ns) as f64 / wall_ns * 100.0,
        proc_cpu_avg_pct,
        mem_peak_mb: rows
            .iter()
            .filter_map(|r| r.product_cgroup?.mem_peak_bytes)
            .max()
            .map(|b| b as f64 / MB),
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
pub(crate) mod tests;
