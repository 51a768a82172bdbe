//! What the orchestrator samples while a run goes: every sample interval, the
//! product's consumer-group offsets and the input's high watermark, and the
//! CPU and memory of the product's process tree, of each harness process and
//! of the host. Then the window's resource figures from those rows.

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::analysis::{mean, percentile};
use crate::broker::admin::OffsetReader;
use crate::clock::now_us;
use crate::sampler::{self, MemoryInstrument, TreeReading};

use super::RunNames;

/// The roots of the process trees sampled besides the host.
#[derive(Debug, Clone, Copy)]
pub struct Watched {
    pub product: i32,
    pub broker: Option<i32>,
    pub gendata: i32,
    pub probe: i32,
}

/// One sample of everything.
#[derive(Debug, Clone)]
pub struct SampleRow {
    pub at_us: i64,
    pub committed: i64,
    pub input_high: i64,
    /// Records on topics other than the run's own (only at the window's bounds).
    pub extra_high: Option<i64>,
    pub product: TreeReading,
    pub broker: Option<TreeReading>,
    pub gendata: TreeReading,
    pub probe: TreeReading,
    /// The host's busy and total CPU ticks.
    pub host: Option<(u64, u64)>,
}

/// Samples a run's product, harness and host.
pub struct Monitor<'a> {
    offsets: &'a OffsetReader,
    names: &'a RunNames,
    watched: Watched,
    grid: Grid,
    next_due_us: i64,
    ticks_per_s: f64,
    page_size: u64,
    pub rows: Vec<SampleRow>,
}

impl<'a> Monitor<'a> {
    pub(super) fn new(
        offsets: &'a OffsetReader,
        names: &'a RunNames,
        watched: Watched,
        grid: Grid,
    ) -> Self {
        let (ticks_per_s, page_size) = sampler::kernel_units();
        Monitor {
            offsets,
            names,
            watched,
            next_due_us: grid.next_after(now_us() - 1),
            grid,
            ticks_per_s,
            page_size,
            rows: Vec::new(),
        }
    }

    /// When the next sample on the grid is due.
    pub fn next_due_us(&self) -> i64 {
        self.next_due_us
    }

    /// Takes a sample if one is due at `now_us`.
    pub fn sample_if_due(&mut self, now_us: i64) -> Result<()> {
        if now_us >= self.next_due_us {
            self.sample(false)?;
        }
        Ok(())
    }

    /// Takes one sample now; `with_extra` also sums the run's other topics.
    pub fn sample(&mut self, with_extra: bool) -> Result<()> {
        let at_us = now_us();
        let names = self.names;
        let committed = self.offsets.committed(&names.input)?;
        let input_high = self.offsets.high_watermark(&names.input)?;
        let extra_high = if with_extra {
            Some(self.offsets.run_topics_high_watermark(
                &names.group,
                &[&names.input, &names.output, &names.floor],
            )?)
        } else {
            None
        };
        self.next_due_us = self.grid.next_after(at_us);
        let all = sampler::all_processes();
        let tree = |root: i32| sampler::read_tree(root, &all, self.page_size);
        self.rows.push(SampleRow {
            at_us,
            committed,
            input_high,
            extra_high,
            product: tree(self.watched.product),
            broker: self.watched.broker.map(tree),
            gendata: tree(self.watched.gendata),
            probe: tree(self.watched.probe),
            host: sampler::read_host_ticks(),
        });
        Ok(())
    }

    /// Samples the product's tree from `pgid` on (a restarted product).
    pub fn watch_product(&mut self, pgid: i32) {
        self.watched.product = pgid;
    }

    pub fn ticks_per_s(&self) -> f64 {
        self.ticks_per_s
    }
}

/// Sample times: `anchor + k * interval` for every integer k, so that a grid
/// anchored at the window's start has samples on both its bounds.
#[derive(Debug, Clone, Copy)]
pub struct Grid {
    pub anchor_us: i64,
    pub interval_us: i64,
}

impl Grid {
    /// The first grid time strictly after `at_us`.
    pub fn next_after(&self, at_us: i64) -> i64 {
        let steps = (at_us - self.anchor_us).div_euclid(self.interval_us) + 1;
        self.anchor_us + steps * self.interval_us
    }
}

/// CPU and memory of one process tree over the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceSummary {
    pub cpu_avg_pct: f64,
    pub cpu_p95_pct: f64,
    pub mem_avg_mb: f64,
    pub mem_max_mb: f64,
    /// CPU intervals in the window.
    pub samples: usize,
    /// PSS, or RSS where any sample could not read PSS.
    pub instrument: MemoryInstrument,
}

/// The host over the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostLoad {
    pub busy_avg_pct: f64,
    pub busy_max_pct: f64,
}

/// Every process tree's resources, and the host's load, over the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resources {
    pub product: Option<ResourceSummary>,
    /// The local broker; absent for an external one.
    pub broker: Option<ResourceSummary>,
    pub gendata: Option<ResourceSummary>,
    pub probe: Option<ResourceSummary>,
    pub host: Option<HostLoad>,
}

const MB: f64 = 1024.0 * 1024.0;

/// Resources of the tree `pick` selects, over `rows` (the window, bounds included).
pub fn summarize(
    rows: &[SampleRow],
    ticks_per_s: f64,
    pick: impl Fn(&SampleRow) -> Option<&TreeReading>,
) -> Option<ResourceSummary> {
    let mut cpu = Vec::new();
    for pair in rows.windows(2) {
        let (Some(before), Some(after)) = (pick(&pair[0]), pick(&pair[1])) else {
            continue;
        };
        let wall_s = (pair[1].at_us - pair[0].at_us) as f64 / 1e6;
        cpu.push(sampler::cpu_pct(
            &before.ticks,
            &after.ticks,
            wall_s,
            ticks_per_s,
        ));
    }
    let readings: Vec<&TreeReading> = rows.iter().filter_map(&pick).collect();
    let memory: Vec<f64> = readings
        .iter()
        .map(|r| r.memory_bytes as f64 / MB)
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
        mem_max_mb: memory.iter().copied().fold(0.0, f64::max),
        samples: cpu.len(),
        instrument,
    })
}

/// The host's busy share per interval over `rows`.
pub fn host_load(rows: &[SampleRow]) -> Option<HostLoad> {
    let busy: Vec<f64> = rows
        .windows(2)
        .filter_map(|pair| {
            let ((b0, t0), (b1, t1)) = (pair[0].host?, pair[1].host?);
            (t1 > t0).then(|| (b1 - b0) as f64 / (t1 - t0) as f64 * 100.0)
        })
        .collect();
    Some(HostLoad {
        busy_avg_pct: mean(&busy)?,
        busy_max_pct: busy.iter().copied().fold(0.0, f64::max),
    })
}

/// Per-interval series for time-series charts, over the whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Seconds from the window's start (negative during warm-up), at each interval's end.
    pub t_s: Vec<f64>,
    pub offered_per_s: Vec<f64>,
    pub consumed_per_s: Vec<f64>,
    pub backlog: Vec<i64>,
    pub product_cpu_pct: Vec<f64>,
    pub product_mem_mb: Vec<f64>,
}

/// The series of `rows`, with time measured from `window_start_us`.
pub fn series(rows: &[SampleRow], window_start_us: i64, ticks_per_s: f64) -> Series {
    let mut s = Series {
        t_s: Vec::new(),
        offered_per_s: Vec::new(),
        consumed_per_s: Vec::new(),
        backlog: Vec::new(),
        product_cpu_pct: Vec::new(),
        product_mem_mb: Vec::new(),
    };
    for pair in rows.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let dt = (b.at_us - a.at_us) as f64 / 1e6;
        if dt <= 0.0 {
            continue;
        }
        s.t_s
            .push(((b.at_us - window_start_us) as f64 / 1e6 * 1000.0).round() / 1000.0);
        s.offered_per_s
            .push((b.input_high - a.input_high) as f64 / dt);
        s.consumed_per_s
            .push((b.committed - a.committed) as f64 / dt);
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
mod tests {
    use super::*;
    use crate::sampler::TickMap;

    fn reading(ticks: u64, mb: u64, instrument: MemoryInstrument) -> TreeReading {
        TreeReading {
            ticks: TickMap::from([((10, 1), ticks)]),
            memory_bytes: mb * 1024 * 1024,
            instrument,
            processes: 1,
        }
    }

    fn row(at_s: i64, committed: i64, input_high: i64, product_ticks: u64, mb: u64) -> SampleRow {
        SampleRow {
            at_us: at_s * 1_000_000,
            committed,
            input_high,
            extra_high: None,
            product: reading(product_ticks, mb, MemoryInstrument::Pss),
            broker: None,
            gendata: reading(0, 1, MemoryInstrument::Pss),
            probe: reading(0, 1, MemoryInstrument::Pss),
            host: Some((at_s as u64 * 100, at_s as u64 * 200)),
        }
    }

    #[test]
    fn the_grid_falls_on_the_anchor_from_either_side() {
        let grid = Grid {
            anchor_us: 10_000,
            interval_us: 1_000,
        };
        assert_eq!(grid.next_after(7_500), 8_000);
        assert_eq!(grid.next_after(9_999), 10_000);
        assert_eq!(grid.next_after(10_000), 11_000);
        assert_eq!(grid.next_after(10_001), 11_000);
        assert_eq!(grid.next_after(12_999), 13_000);
    }

    #[test]
    fn resources_average_intervals_and_samples() {
        // 100 ticks/s: 50 ticks in 1 s = 50 %, then 150 ticks = 150 %.
        let rows = vec![
            row(0, 0, 0, 0, 100),
            row(1, 10, 10, 50, 200),
            row(2, 20, 20, 200, 300),
        ];
        let r = summarize(&rows, 100.0, |r| Some(&r.product)).unwrap();
        assert_eq!(r.samples, 2);
        assert!((r.cpu_avg_pct - 100.0).abs() < 1e-9);
        assert!((r.cpu_p95_pct - 150.0).abs() < 1e-9);
        assert!((r.mem_avg_mb - 200.0).abs() < 1e-9);
        assert!((r.mem_max_mb - 300.0).abs() < 1e-9);
        assert_eq!(r.instrument, MemoryInstrument::Pss);
        assert!(summarize(&rows, 100.0, |r| r.broker.as_ref()).is_none());
        let host = host_load(&rows).unwrap();
        assert!((host.busy_avg_pct - 50.0).abs() < 1e-9);
    }

    #[test]
    fn one_rss_sample_makes_the_instrument_rss() {
        let mut rows = vec![row(0, 0, 0, 0, 100), row(1, 0, 0, 0, 100)];
        rows[1].product.instrument = MemoryInstrument::Rss;
        let r = summarize(&rows, 100.0, |r| Some(&r.product)).unwrap();
        assert_eq!(r.instrument, MemoryInstrument::Rss);
    }

    #[test]
    fn series_are_rates_per_interval() {
        let rows = vec![
            row(-1, 0, 100, 0, 5),
            row(0, 50, 300, 10, 6),
            row(2, 450, 700, 30, 7),
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
