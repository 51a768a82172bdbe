//! The settle phase: after the load stops, the product finishes its input
//! before it is stopped, so that verification covers every record sent.
//! What "finished" means depends on what the product commits.

use std::time::{Duration, Instant};

use anyhow::Result;

use super::RunNames;
use crate::analysis::judge::Settle;
use crate::broker::admin::OffsetReader;
use crate::interrupt::{Interrupt, Interrupted};
use crate::products::Deployed;

/// How often the settle phase looks at the product's progress.
const SETTLE_POLL: Duration = Duration::from_millis(100);
/// Output unchanged for this long counts as finished for a product that
/// commits no offsets: its output is the only sign of its progress.
const QUIET_OUTPUT: Duration = Duration::from_secs(3);
/// Once a product's commit covers the input, output unchanged for this long
/// counts as finished. What follows a commit is a transaction's markers or
/// Kafka Streams passing records on from its repartition topic: over 471
/// runs' settle.json here, the output grew after the commit in 7, by 4 ms
/// at most (docs/methodology.md, "The settle phase").
pub const QUIET_AFTER_COMMIT: Duration = Duration::from_millis(500);

/// Polls `finished` with the time since the window's end, every
/// [`SETTLE_POLL`], until it says the product is done or `bound` passes;
/// fails if the product dies or Ctrl-C arrives.
fn settle_until(
    bound: Duration,
    product: &mut Deployed,
    interrupt: &Interrupt,
    mut finished: impl FnMut(Duration) -> Result<bool>,
) -> Result<Settle> {
    let started = Instant::now();
    loop {
        let reached_end = finished(started.elapsed())?;
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
    settle_until(bound, product, interrupt, |_| {
        Ok(offsets.committed(input)?.max(0) as u64 >= owed_until)
    })
}

/// Waits until the product's committed offset on the input reaches
/// `owed_until` and then its output topic has not grown for
/// [`QUIET_AFTER_COMMIT`], or `bound` passes. The settle time is the
/// commit's: the figure is how long the product took to finish its input.
/// The commit alone does not end the output: a product that passes records
/// through a topic of its own (Kafka Streams' repartition topic) commits its
/// input before it writes what those records lead to, and while it drains a
/// backlog there the output is still growing.
pub(super) fn settle_committed_and_quiet(
    offsets: &OffsetReader,
    names: &RunNames,
    owed_until: u64,
    bound: Duration,
    product: &mut Deployed,
    interrupt: &Interrupt,
) -> Result<(Settle, SettleTimeline)> {
    let mut output = OutputGrowth::watch(offsets, &names.output)?;
    let mut committed_at = None;
    let settle = settle_until(bound, product, interrupt, |elapsed| {
        if committed_at.is_none() && offsets.committed(&names.input)?.max(0) as u64 >= owed_until {
            committed_at = Some(elapsed);
            // The quiet counts from the commit: what it leads to comes after.
            output.quiet_from_now();
        }
        let quiet = output.quiet_for(offsets, QUIET_AFTER_COMMIT)?;
        Ok(quiet && committed_at.is_some())
    })?;
    let timeline = SettleTimeline {
        committed_s: committed_at.map(|at| at.as_secs_f64()),
        output_last_grew_s: output.last_growth().map(|at| at.as_secs_f64()),
        ended_s: settle.seconds,
    };
    let settle = match committed_at {
        Some(at) if settle.reached_end => Settle {
            seconds: at.as_secs_f64(),
            ..settle
        },
        _ => settle,
    };
    Ok((settle, timeline))
}

/// What the settle phase of a committing product saw, from the window's
/// end: when the commit covered the input, when the output last grew, and
/// when the phase ended. Kept in the run's log folder (settle.json), the
/// evidence for [`QUIET_AFTER_COMMIT`].
#[derive(Debug, serde::Serialize)]
pub(super) struct SettleTimeline {
    committed_s: Option<f64>,
    output_last_grew_s: Option<f64>,
    ended_s: f64,
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
    settle_until(bound, product, interrupt, |_| {
        growth.quiet_for(offsets, QUIET_OUTPUT)
    })
}

/// When an output topic last grew, as seen by polling its high watermark.
struct OutputGrowth<'t> {
    topic: &'t str,
    last: i64,
    watched: Instant,
    last_growth: Option<Instant>,
    /// Where the quiet counts from: the last growth, or a later moment
    /// [`OutputGrowth::quiet_from_now`] set.
    quiet_since: Instant,
}

impl<'t> OutputGrowth<'t> {
    fn watch(offsets: &OffsetReader, topic: &'t str) -> Result<OutputGrowth<'t>> {
        let now = Instant::now();
        Ok(OutputGrowth {
            topic,
            last: offsets.high_watermark(topic)?,
            watched: now,
            last_growth: None,
            quiet_since: now,
        })
    }

    /// Counts the quiet from now, as if the topic had just grown.
    fn quiet_from_now(&mut self) {
        self.quiet_since = Instant::now();
    }

    /// When the topic last grew, from when it was first watched; none if
    /// it has not grown since.
    fn last_growth(&self) -> Option<Duration> {
        self.last_growth.map(|at| at - self.watched)
    }

    /// Polls the topic once; true when it has not grown for `quiet`.
    fn quiet_for(&mut self, offsets: &OffsetReader, quiet: Duration) -> Result<bool> {
        let now = offsets.high_watermark(self.topic)?;
        if now != self.last {
            self.last = now;
            let at = Instant::now();
            self.last_growth = Some(at);
            self.quiet_since = at;
        }
        Ok(self.quiet_since.elapsed() >= quiet)
    }
}
