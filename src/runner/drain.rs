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

use super::monitor::Helpers;
use super::pipeline::{create_topics, expectation, spawn_helper, verify_output, Run, RunKind};
use super::Judged;
use crate::analysis::judge::{judge_drain, DrainInputs, Verified};
use crate::analysis::window::Sample;
use crate::broker::admin::OffsetReader;
use crate::clock::now_us;
use crate::gendata::schedule::Pacing;
use crate::gendata::{GendataPlan, GendataSummary};
use crate::interrupt::Interrupted;
use crate::isolation::Role;
use crate::products::{Deployed, LaunchSettings};
use crate::workloads::TopicOutput;

/// How often the drain phase reads the committed offset: the drain's two
/// ends are known to within this.
const DRAIN_POLL: Duration = Duration::from_millis(20);
/// The slowest drain the bound waits for, records/s: a product is given
/// run.settle_s plus N / this many seconds to commit the whole backlog.
const SLOWEST_DRAIN_PER_S: u64 = 1000;
/// The slowest pre-fill waited for, records/s (gendata unpaced writes far
/// faster): the pre-fill may take a minute plus N / this many seconds.
const SLOWEST_PREFILL_PER_S: u64 = 10_000;

/// A drain run of `records`, as its phases go.
pub(super) struct DrainRun {
    /// The workload's output, which the sanity checks judge.
    output: &'static dyn TopicOutput,
    records: u64,
    /// gendata's account of the pre-fill, once it is done.
    prefill: Option<GendataSummary>,
}

/// What the drain measured, before it becomes figures.
pub(super) struct Drained {
    prefill: GendataSummary,
    ready_us: i64,
    /// (read time, committed offset) of every poll.
    progress: Vec<(i64, i64)>,
    /// (read time, output high watermark) of the same polls.
    output_progress: Vec<(i64, i64)>,
    rows: Vec<Sample>,
    ticks_per_s: f64,
    bound_s: f64,
}

/// How long a product may take to drain `records`.
pub fn drain_bound(settle_s: u64, records: u64) -> Duration {
    Duration::from_secs(settle_s + records.div_ceil(SLOWEST_DRAIN_PER_S))
}

impl DrainRun {
    pub(super) fn new(run: &Run<'_>, records: u64) -> Result<DrainRun> {
        if !run.line.product.commits_offsets {
            bail!(
                "{} commits no input offsets, and a drain is timed by them; it cannot take a drain run",
                run.line.product.name
            );
        }
        let output = crate::workloads::topic_output(run.workload)
            .ok_or_else(|| anyhow!("workload {} writes no topic", run.workload.name))?;
        Ok(DrainRun {
            output,
            records,
            prefill: None,
        })
    }
}

impl RunKind for DrainRun {
    type Measured = Drained;

    fn create(&mut self, run: &mut Run<'_>) -> Result<()> {
        run.progress.phase("creating topics");
        create_topics(run)
    }

    /// Every record written and acknowledged before the product starts.
    fn before_start(&mut self, run: &mut Run<'_>, offsets: &OffsetReader) -> Result<()> {
        let records = self.records;
        run.progress.phase("pre-filling the input");
        let prefill_bound = Duration::from_secs(60 + records.div_ceil(SLOWEST_PREFILL_PER_S));
        let start_us = now_us();
        let gendata_file = run.log_dir.join("gendata.json");
        let plan = GendataPlan {
            bootstrap: run.bootstrap().to_string(),
            topic: run.names.input.clone(),
            rate: 0,
            seed: run.config.seed,
            start_us,
            window_start_us: start_us,
            end_us: start_us + prefill_bound.as_micros() as i64,
            window_file: None,
            max_records: Some(records),
            summary: Some(gendata_file.clone()),
            avro_events: None,
            partitions: run.workload.input.partitions as u32,
        };
        let mut gendata = spawn_helper(
            "gendata",
            Role::Gendata,
            &plan.command_args(),
            run.log_dir,
            "",
        )?;
        gendata.wait_exit(prefill_bound + Duration::from_secs(60), run.interrupt())?;
        let prefill: GendataSummary = crate::handoff::read(&gendata_file)?;
        let written = offsets.high_watermark(&run.names.input)?;
        if prefill.records_acked < records || written < records as i64 {
            bail!(
                "the pre-fill wrote {written} of {records} records ({} acknowledged) within {} s",
                prefill.records_acked,
                prefill_bound.as_secs()
            );
        }
        self.prefill = Some(prefill);
        Ok(())
    }

    /// The committed offset polled every few milliseconds, the usual
    /// samples every interval, until the whole input is committed or the
    /// bound runs out.
    fn measure(
        &mut self,
        run: &mut Run<'_>,
        product: &mut Deployed,
        _settings: &LaunchSettings,
        offsets: &OffsetReader,
    ) -> Result<Drained> {
        let ready_us = now_us();
        run.progress.phase("draining");
        let (_, mut monitor) = run.monitor(offsets, product, Helpers::default(), ready_us);
        let bound = drain_bound(run.ctx.bench.run.settle_s, self.records);
        let started = Instant::now();
        let (mut polls, mut output_polls) = (Vec::new(), Vec::new());
        loop {
            let at_us = now_us();
            let committed = offsets.committed(&run.names.input)?;
            polls.push((at_us, committed));
            output_polls.push((now_us(), offsets.high_watermark(&run.names.output)?));
            if committed >= self.records as i64 || started.elapsed() >= bound {
                break;
            }
            product.check_alive()?;
            if run.interrupt().is_set() {
                return Err(Interrupted.into());
            }
            monitor.sample_if_due(now_us())?;
            std::thread::sleep(DRAIN_POLL);
        }
        // A last sample closes the span the resources are judged over.
        monitor.sample(true)?;
        Ok(Drained {
            prefill: self
                .prefill
                .take()
                .ok_or_else(|| anyhow!("the drain measured before its pre-fill"))?,
            ready_us,
            progress: polls,
            output_progress: output_polls,
            ticks_per_s: monitor.ticks_per_s(),
            rows: std::mem::take(&mut monitor.rows),
            bound_s: bound.as_secs_f64(),
        })
    }

    /// A drain is over once measured: the product is stopped at once.
    fn settle(
        &mut self,
        run: &mut Run<'_>,
        _measured: &mut Drained,
        _product: &mut Deployed,
        _offsets: &OffsetReader,
    ) -> Result<()> {
        run.progress.phase("stopping the product");
        Ok(())
    }

    fn verify(
        &mut self,
        run: &mut Run<'_>,
        measured: &mut Drained,
        offsets: &OffsetReader,
    ) -> Result<Verified> {
        let expectation =
            expectation(run, offsets, measured.prefill.records_sent, Pacing::Unpaced)?;
        verify_output(run, offsets, expectation)
    }

    fn judge(&self, run: &Run<'_>, m: Drained, verified: Verified) -> Result<Judged> {
        let judgement = judge_drain(&DrainInputs {
            records: self.records,
            ready_us: m.ready_us,
            progress: &m.progress,
            output_progress: &m.output_progress,
            samples: &m.rows,
            ticks_per_s: m.ticks_per_s,
            config: run.config,
            workload: self.output,
            prefill: &m.prefill,
            verified: &verified,
            bound_s: m.bound_s,
            tolerances: &run.ctx.bench.tolerances,
        });
        Ok(Judged {
            judgement,
            gendata: m.prefill,
            chaos: None,
            latency_histogram: None,
            latency_series: None,
        })
    }
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
