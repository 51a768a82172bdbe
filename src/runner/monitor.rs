//! What the orchestrator samples while a run goes: every sample interval, the
//! CPU of the product's process tree, of each harness process and of the
//! host, then the product's consumer-group offset and the input's high
//! watermark, each stamped with its own read time, and last the trees' memory.

use anyhow::Result;

use std::sync::Arc;

use crate::analysis::window::{OffsetRead, Sample};
use crate::broker::admin::OffsetReader;
use crate::clock::now_us;
use crate::isolation::{self, cgroup::ProductCgroup};
use crate::products::ProductRoots;
use crate::sampler;

use super::RunNames;

/// The roots of the process trees sampled besides the host.
#[derive(Clone)]
pub struct Watched {
    /// The product's processes (a deployment's members, here or on other
    /// hosts), sampled as one.
    pub product: ProductRoots,
    /// The local broker's nodes, sampled as one; empty for an external one.
    pub broker: Vec<i32>,
    pub helpers: Helpers,
    /// The product's cgroup, read with every sample; None where the suite
    /// could make none (or the product runs on other hosts).
    pub cgroup: Option<Arc<ProductCgroup>>,
}

/// The processes a run kind starts beside the product, each None when it
/// does not run (a drain run's pre-fill is over before the product starts).
#[derive(Debug, Default, Clone, Copy)]
pub struct Helpers {
    pub gendata: Option<i32>,
    pub probe: Option<i32>,
    /// The local ClickHouse of an ETL run.
    pub sink: Option<i32>,
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
    pub rows: Vec<Sample>,
    next_poll_us: i64,
    /// Offsets read between samples, every [`OFFSET_POLL_US`].
    pub offset_polls: Vec<OffsetRead>,
}

/// How often the offsets are read between samples: often enough to place
/// each commit of a product committing every second within a tenth of it.
const OFFSET_POLL_US: i64 = 100_000;

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
            next_poll_us: 0,
            offset_polls: Vec::new(),
        }
    }

    /// Reads the committed offset and the high watermark if a poll is due:
    /// two broker round trips, with nothing from /proc.
    pub fn poll_offsets_if_due(&mut self, now_us: i64) -> Result<()> {
        if now_us < self.next_poll_us {
            return Ok(());
        }
        self.next_poll_us = now_us + OFFSET_POLL_US;
        let at_us = crate::clock::now_us();
        let committed = self.offsets.committed(&self.names.input)?;
        let input_high = self.offsets.high_watermark(&self.names.input)?;
        self.offset_polls.push(OffsetRead {
            at_us,
            committed,
            input_high,
        });
        Ok(())
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
    ///
    /// The instants come first: every process's CPU ticks (one pass over
    /// /proc/PID/stat, a few milliseconds) and the host's, then the committed
    /// offset and the high watermark, each a broker round trip. Memory comes
    /// last: a JVM's smaps_rollup alone takes over 20 ms to read, and memory
    /// is a level that needs no exact instant. Only the instants are timed.
    ///
    /// A product on other hosts has its processes read first, a round trip
    /// over each host's connection that would otherwise stretch the timed
    /// reads: it ends about as long before `procs_at_us` at every sample,
    /// so the CPU between two samples spans the same time.
    pub fn sample(&mut self, with_extra: bool) -> Result<()> {
        let names = self.names;
        let remote_hosts = self.watched.product.by_host();
        let remote_processes = remote_hosts
            .iter()
            .map(|(host, _)| host.processes(self.ticks_per_s))
            .collect::<Result<Vec<_>>>()?;
        let procs_at_us = now_us();
        let all = sampler::all_processes();
        let host = sampler::read_host_ticks();
        let product_cgroup = self.watched.cgroup.as_ref().and_then(|c| c.read());
        let committed_at_us = now_us();
        let committed = self.offsets.committed(&names.input)?;
        let high_at_us = now_us();
        let input_high = self.offsets.high_watermark(&names.input)?;
        let done_us = now_us();
        // The trees' ticks are those of the snapshot taken at procs_at_us.
        let tree = |root: i32| sampler::read_tree(root, &all, self.page_size);
        // A helper that does not run reads as an empty tree.
        let helper = |root: Option<i32>| match root {
            Some(root) => tree(root),
            None => sampler::TreeReading::empty(),
        };
        let mut product = sampler::read_trees(&self.watched.product.local, &all, self.page_size);
        for ((host, groups), processes) in remote_hosts.iter().zip(&remote_processes) {
            product.add(host.read_trees(groups, processes)?);
        }
        let broker = (!self.watched.broker.is_empty())
            .then(|| sampler::read_trees(&self.watched.broker, &all, self.page_size));
        let gendata = helper(self.watched.helpers.gendata);
        let probe = helper(self.watched.helpers.probe);
        let sink = self.watched.helpers.sink.map(tree);
        // Everything else on the host: not the suite's tree (the product,
        // gendata and the probe are its children), the broker's or the sink's.
        let ours: Vec<i32> = std::iter::once(std::process::id() as i32)
            .chain(self.watched.broker.iter().copied())
            .chain(self.watched.helpers.sink)
            .collect();
        let outside = sampler::outside_ticks(&ours, &all);
        let mut product_cpus: Vec<String> =
            sampler::trees_members(&self.watched.product.local, &all)
                .into_iter()
                .filter_map(isolation::allowed_cpus_of)
                .collect();
        product_cpus.sort();
        product_cpus.dedup();
        // The extra topics are summed only at the window's bounds and belong
        // to no instant of the sample; their read is not timed with it.
        let extra_high = if with_extra {
            Some(self.offsets.run_topics_high_watermark(
                &names.group,
                &[&names.input, &names.output, &names.floor],
            )?)
        } else {
            None
        };
        self.next_due_us = self.grid.next_after(procs_at_us);
        self.rows.push(Sample {
            procs_at_us,
            committed_at_us,
            committed,
            high_at_us,
            input_high,
            extra_high,
            read_us: done_us - procs_at_us,
            product,
            broker,
            gendata,
            probe,
            sink,
            host,
            outside,
            product_cgroup,
            product_cpus,
        });
        Ok(())
    }

    /// Samples the broker's trees from `pids` on (a restarted local node).
    pub fn watch_broker(&mut self, pids: Vec<i32>) {
        self.watched.broker = pids;
    }

    /// Samples the product's trees from `roots` on (a restarted product).
    pub fn watch_product(&mut self, roots: ProductRoots) {
        self.watched.product = roots;
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
