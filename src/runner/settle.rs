//! The settle phase: after the load stops, the product finishes its input
//! before it is stopped, so that verification covers every record sent.
//! What "finished" means depends on what the product commits.

use std::time::Duration;

use anyhow::Result;

use super::RunNames;
use crate::analysis::judge::Settle;
use crate::broker::admin::OffsetReader;
use crate::interrupt::{Interrupt, Interrupted};
use crate::products::Deployed;

/// How often the settle phase looks at the product's progress.
const SETTLE_POLL: Duration = Duration::from_millis(100);
/// Output unchanged for this long counts as finished: for a product that
/// commits no offsets, and for every other once its commit covers the input.
const QUIET_OUTPUT: Duration = Duration::from_secs(3);

/// Polls `finished` every [`SETTLE_POLL`] until it says the product is done
/// or `bound` passes; fails if the product dies or Ctrl-C arrives.
fn settle_until(
    bound: Duration,
    product: &mut Deployed,
    interrupt: &Interrupt,
    mut finished: impl FnMut() -> Result<bool>,
) -> Result<Settle> {
    let started = std::time::Instant::now();
    loop {
        let reached_end = finished()?;
        if reached_end || started.elapsed() >= bound {
            return Ok(Settle {
                seconds: started.elapsed().as_secs_f64(),
                reached_end,
            });
        }
        product.check_alive()?;
        if interrupt.is_set() {
            return Err(Interrupted.into());
        }
        std::thread::sleep(SETTLE_POLL);
    }
}

/// Waits until the product's committed offset on `input` reaches
/// `owed_until`, or `bound` passes: the end of work for a product whose
/// sink is not a topic (a table).
pub(super) fn settle_committed(
    offsets: &OffsetReader,
    input: &str,
    owed_until: u64,
    bound: Duration,
    product: &mut Deployed,
    interrupt: &Interrupt,
) -> Result<Settle> {
    settle_until(bound, product, interrupt, || {
        Ok(offsets.committed(input)?.max(0) as u64 >= owed_until)
    })
}

/// Waits until the product's committed offset on the input reaches
/// `owed_until` and its output topic has not grown for [`QUIET_OUTPUT`], or
/// `bound` passes. The commit alone does not end the output: a product that
/// passes records through a topic of its own (Kafka Streams' repartition
/// topic) commits its input before it writes what those records lead to, and
/// while it drains a backlog there the output is still growing.
pub(super) fn settle_committed_and_quiet(
    offsets: &OffsetReader,
    names: &RunNames,
    owed_until: u64,
    bound: Duration,
    product: &mut Deployed,
    interrupt: &Interrupt,
) -> Result<Settle> {
    let mut output = OutputGrowth::watch(offsets, &names.output)?;
    settle_until(bound, product, interrupt, || {
        let quiet = output.quiet_for(offsets, QUIET_OUTPUT)?;
        Ok(quiet && offsets.committed(&names.input)?.max(0) as u64 >= owed_until)
    })
}

/// Waits until the output topic has not grown for [`QUIET_OUTPUT`], or
/// `bound` passes: the end of work for a product that commits no offsets.
pub(super) fn settle_quiet_output(
    offsets: &OffsetReader,
    output: &str,
    bound: Duration,
    product: &mut Deployed,
    interrupt: &Interrupt,
) -> Result<Settle> {
    let mut growth = OutputGrowth::watch(offsets, output)?;
    settle_until(bound, product, interrupt, || {
        growth.quiet_for(offsets, QUIET_OUTPUT)
    })
}

/// When an output topic last grew, as seen by polling its high watermark.
struct OutputGrowth<'t> {
    topic: &'t str,
    last: i64,
    last_change: std::time::Instant,
}

impl<'t> OutputGrowth<'t> {
    fn watch(offsets: &OffsetReader, topic: &'t str) -> Result<OutputGrowth<'t>> {
        Ok(OutputGrowth {
            topic,
            last: offsets.high_watermark(topic)?,
            last_change: std::time::Instant::now(),
        })
    }

    /// Polls the topic once; true when it has not grown for `quiet`.
    fn quiet_for(&mut self, offsets: &OffsetReader, quiet: Duration) -> Result<bool> {
        let now = offsets.high_watermark(self.topic)?;
        if now != self.last {
            self.last = now;
            self.last_change = std::time::Instant::now();
        }
        Ok(self.last_change.elapsed() >= quiet)
    }
}
