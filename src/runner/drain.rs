//! A drain run: the input pre-filled with N records before the product
//! starts, then the product timed while it eats that backlog. gendata has
//! finished before the product starts, so nothing competes with the product
//! for the CPU: the figure is its read capacity.
//!
//! Phases: topics -> pre-fill (gendata unpaced, N records, every one
//! acknowledged) -> product started and ready -> drain (the committed offset
//! polled every few milliseconds, the usual samples every interval) until
//! the whole input is committed or the bound runs out -> product stopped ->
//! verification of the whole output.

use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Result};

use super::monitor::{Grid, Monitor, Watched};
use super::progress::Progress;
use super::{
    create_topics, launch_settings, spawn_helper, verify_output, Judged, RunContext, RunNames,
};
use crate::analysis::judge::{judge_drain, DrainInputs, Verified};
use crate::analysis::window::Sample;
use crate::broker::admin::OffsetReader;
use crate::clock::now_us;
use crate::config::{LineRef, Workload};
use crate::gendata::{GendataPlan, GendataSummary};
use crate::interrupt::Interrupted;
use crate::products::{self, Installation};
use crate::results::RunConfig;
use crate::workloads::{Expectation, TopicOutput};

/// How often the drain phase reads the committed offset: the drain's two
/// ends are known to within this.
const DRAIN_POLL: Duration = Duration::from_millis(20);
/// The slowest drain the bound waits for, records/s: a product is given
/// run.settle_s plus N / this many seconds to commit the whole backlog.
const SLOWEST_DRAIN_PER_S: u64 = 1000;
/// The slowest pre-fill waited for, records/s (gendata unpaced writes far
/// faster): the pre-fill may take a minute plus N / this many seconds.
const SLOWEST_PREFILL_PER_S: u64 = 10_000;

/// What a drain run's phases produced, before it becomes figures.
pub(super) struct Drained {
    /// The workload's output, which the sanity checks judge.
    workload: &'static dyn TopicOutput,
    records: u64,
    prefill: GendataSummary,
    ready_us: i64,
    progress: Vec<(i64, i64)>,
    rows: Vec<Sample>,
    ticks_per_s: f64,
    verified: Verified,
    bound_s: f64,
}

impl Drained {
    /// The judgement of what the drain measured.
    pub(super) fn judged(self, ctx: &RunContext<'_>, config: &RunConfig) -> Judged {
        let judgement = judge_drain(&DrainInputs {
            records: self.records,
            ready_us: self.ready_us,
            progress: &self.progress,
            samples: &self.rows,
            ticks_per_s: self.ticks_per_s,
            config,
            workload: self.workload,
            prefill: &self.prefill,
            verified: &self.verified,
            bound_s: self.bound_s,
            tolerances: &ctx.bench.tolerances,
        });
        Judged {
            judgement,
            gendata: self.prefill,
            chaos: None,
            latency_histogram: None,
            latency_series: None,
        }
    }
}

/// How long a product may take to drain `records`.
pub fn drain_bound(settle_s: u64, records: u64) -> Duration {
    Duration::from_secs(settle_s + records.div_ceil(SLOWEST_DRAIN_PER_S))
}

#[allow(clippy::too_many_arguments)]
pub(super) fn measure(
    ctx: &RunContext<'_>,
    line: LineRef<'_>,
    installation: &Installation,
    workload: &Workload,
    config: &RunConfig,
    records: u64,
    names: &RunNames,
    log_dir: &std::path::Path,
) -> Result<Drained> {
    let bootstrap = &ctx.broker.bootstrap;
    let interrupt = ctx.interrupt;
    let run = &ctx.bench.run;
    if !line.product.commits_offsets {
        bail!(
            "{} commits no input offsets, and a drain is timed by them; it cannot take a drain run",
            line.product.name
        );
    }
    let mut progress = Progress::new(&line.line.name, &workload.name, config);

    // setup
    progress.phase("creating topics");
    create_topics(bootstrap, workload, names)?;

    // pre-fill: every record written and acknowledged before the product starts
    progress.phase("pre-filling the input");
    let prefill_bound = Duration::from_secs(60 + records.div_ceil(SLOWEST_PREFILL_PER_S));
    let start_us = now_us();
    let end_us = start_us + prefill_bound.as_micros() as i64;
    let gendata_file = log_dir.join("gendata.json");
    let plan = GendataPlan {
        bootstrap: bootstrap.to_string(),
        topic: names.input.clone(),
        rate: 0,
        seed: config.seed,
        start_us,
        window_start_us: start_us,
        end_us,
        window_file: None,
        max_records: Some(records),
        summary: Some(gendata_file.clone()),
        avro_events: None,
    };
    let mut gendata = spawn_helper("gendata", &plan.command_args(), log_dir, "")?;
    gendata.wait_exit(prefill_bound + Duration::from_secs(60), interrupt)?;
    let prefill: GendataSummary = crate::handoff::read(&gendata_file)?;
    let offsets = OffsetReader::for_group(bootstrap, &names.group)?;
    let written = offsets.high_watermark(&names.input)?;
    if prefill.records_acked < records || written < records as i64 {
        bail!(
            "the pre-fill wrote {written} of {records} records ({} acknowledged) within {} s",
            prefill.records_acked,
            prefill_bound.as_secs()
        );
    }

    // start the product on the full backlog
    progress.phase("starting the product");
    let settings = launch_settings(bootstrap, line, config, workload, names)?;
    let mut product = products::start(line.product, installation, &settings, log_dir, "product")?;
    product.wait_ready(Duration::from_secs(run.ready_timeout_s), interrupt)?;
    let ready_us = now_us();

    // drain
    progress.phase("draining");
    let grid = Grid {
        anchor_us: ready_us,
        interval_us: config.sample_interval_ms as i64 * 1000,
    };
    let mut monitor = Monitor::new(
        &offsets,
        names,
        Watched {
            product: product.pgid() as i32,
            broker: ctx.broker_pid.map(|p| p as i32),
            gendata: None,
            probe: None,
            sink: None,
        },
        grid,
    );
    let bound = drain_bound(run.settle_s, records);
    let started = Instant::now();
    let mut polls = Vec::new();
    loop {
        let at_us = now_us();
        let committed = offsets.committed(&names.input)?;
        polls.push((at_us, committed));
        if committed >= records as i64 || started.elapsed() >= bound {
            break;
        }
        product.check_alive()?;
        if interrupt.is_set() {
            return Err(Interrupted.into());
        }
        monitor.sample_if_due(now_us())?;
        std::thread::sleep(DRAIN_POLL);
    }
    // A last sample closes the span the resources are judged over.
    monitor.sample(true)?;
    let ticks_per_s = monitor.ticks_per_s();
    let rows = std::mem::take(&mut monitor.rows);
    progress.phase("stopping the product");
    product.stop(Duration::from_secs(run.stop_grace_s));

    // verify
    progress.phase("verifying");
    let committed = if line.product.commits_offsets {
        offsets.committed(&names.input)?.max(0) as u64
    } else {
        prefill.records_sent
    };
    let expectation = Expectation {
        seed: config.seed,
        input_records: prefill.records_sent,
        committed,
        schedule: None,
        delivery: line.line.delivery,
    };
    let verified = verify_output(bootstrap, workload, names, &offsets, expectation, interrupt)?;
    progress.finish();
    Ok(Drained {
        workload: workload
            .topic_output()
            .ok_or_else(|| anyhow!("workload {} writes no topic", workload.name))?,
        records,
        prefill,
        ready_us,
        progress: polls,
        rows,
        ticks_per_s,
        verified,
        bound_s: bound.as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_drain_bound_waits_for_a_thousand_records_a_second() {
        assert_eq!(drain_bound(30, 200_000), Duration::from_secs(230));
        assert_eq!(drain_bound(30, 1), Duration::from_secs(31));
    }
}
