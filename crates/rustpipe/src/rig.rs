//! The CPU rig: the avro-etl stage in process, no broker and no server, so
//! the decoders' true costs show. A synthetic source replays pre-encoded
//! batch datums (gendata's own bytes) into one of two stages:
//! - `decode`: the decoder alone, each event handed to `black_box`;
//! - `pipeline`: decode, flat_map (the datum's events become rows), filter,
//!   encode (RowBinary or Native), and the handoff of each finished block to
//!   a shard thread, which hands the buffer back as the sink would.
//!
//! Every arm runs once per repetition, the arms' order rotating from one
//! repetition to the next, so drift on a shared host spreads over all arms.
//! Allocations are counted in an untimed pass of their own: counting never
//! slows what is timed.

use std::hint::black_box;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;
use std::time::Instant;

use anyhow::{anyhow, bail, Result};
use messages::rig::{self as named, Measurement};

use crate::alloc_count::CountingAllocator;
use crate::avro::{Decoder, DecoderKind};
use crate::rows::{keeps, BlockEncoder, RowFormat};

/// Which part of the work an arm times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RigStage {
    Decode,
    Pipeline,
}

/// One configuration of the rig.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arm {
    pub stage: RigStage,
    pub decoder: DecoderKind,
    /// The insert format; pipeline arms only.
    pub format: Option<RowFormat>,
}

impl Arm {
    /// The arm as its measurements name it.
    pub fn named(self) -> named::Arm {
        named::Arm {
            stage: match self.stage {
                RigStage::Decode => named::DECODE,
                RigStage::Pipeline => named::PIPELINE,
            }
            .to_string(),
            decoder: self.decoder.as_str().to_string(),
            format: self.format.map(|f| f.as_str().to_string()),
        }
    }
}

/// Every arm: each decoder alone, and each decoder with each format.
pub fn arms() -> Vec<Arm> {
    let decode = DecoderKind::ALL.map(|decoder| Arm {
        stage: RigStage::Decode,
        decoder,
        format: None,
    });
    let pipeline = DecoderKind::ALL.into_iter().flat_map(|decoder| {
        RowFormat::ALL.map(|format| Arm {
            stage: RigStage::Pipeline,
            decoder,
            format: Some(format),
        })
    });
    decode.into_iter().chain(pipeline).collect()
}

/// What the rig is to do.
#[derive(Debug, Clone)]
pub struct RigPlan {
    /// The datums the source replays, in a ring.
    pub datums: Vec<Vec<u8>>,
    /// Datums through the stage before each timed pass.
    pub warmup_datums: usize,
    /// Datums in each timed pass.
    pub timed_datums: usize,
    /// Datums in each counted pass.
    pub counted_datums: usize,
    pub repetitions: usize,
    /// Rows per insert block (pipeline arms).
    pub block_rows: usize,
    /// Shard threads blocks are handed to (pipeline arms).
    pub shards: usize,
}

/// Runs every arm `plan.repetitions` times, interleaved, handing each
/// measurement to `report` as soon as it is made.
pub fn run(
    plan: &RigPlan,
    allocator: &CountingAllocator,
    mut report: impl FnMut(&Measurement) -> Result<()>,
) -> Result<()> {
    if plan.datums.is_empty() {
        bail!("the rig has no datums to replay");
    }
    let arms = arms();
    allocator.set_counting(false);
    for repetition in 0..plan.repetitions {
        for i in 0..arms.len() {
            let arm = arms[(i + repetition) % arms.len()];
            let measurement = measure(plan, arm, repetition, allocator)?;
            report(&measurement)?;
        }
    }
    allocator.set_counting(true);
    Ok(())
}

fn measure(
    plan: &RigPlan,
    arm: Arm,
    repetition: usize,
    allocator: &CountingAllocator,
) -> Result<Measurement> {
    let mut stage = Stage::new(arm, plan)?;
    let mut source = plan.datums.iter().cycle();
    stage.pass(source.by_ref().take(plan.warmup_datums))?;

    allocator.set_counting(true);
    let before = allocator.counts();
    let counted = stage.pass(source.by_ref().take(plan.counted_datums))?;
    let allocated = allocator.counts() - before;
    allocator.set_counting(false);

    let rows_before = stage.rows();
    let started = Instant::now();
    let events = stage.pass(source.by_ref().take(plan.timed_datums))?;
    let seconds = started.elapsed().as_secs_f64();
    let rows = stage.rows() - rows_before;
    stage.close()?;
    Ok(Measurement {
        arm: arm.named(),
        repetition,
        events,
        seconds,
        rows,
        counted_events: counted,
        allocations: allocated.allocations,
        allocated_bytes: allocated.bytes,
    })
}

/// An arm's stage, ready to take datums.
struct Stage {
    decoder: Decoder,
    pipeline: Option<Pipeline>,
}

/// The pipeline arms' part after the decoder.
struct Pipeline {
    encoder: BlockEncoder,
    block_rows: usize,
    handoff: Handoff,
    rows: u64,
}

impl Stage {
    fn new(arm: Arm, plan: &RigPlan) -> Result<Stage> {
        let pipeline = match (arm.stage, arm.format) {
            (RigStage::Decode, _) => None,
            (RigStage::Pipeline, Some(format)) => Some(Pipeline {
                encoder: BlockEncoder::new(format),
                block_rows: plan.block_rows,
                handoff: Handoff::start(plan.shards)?,
                rows: 0,
            }),
            (RigStage::Pipeline, None) => bail!("a pipeline arm needs a format"),
        };
        Ok(Stage {
            decoder: Decoder::new(arm.decoder)?,
            pipeline,
        })
    }

    /// Runs `datums` through the stage, and for a pipeline waits until every
    /// block is back from its shard; returns the events decoded.
    fn pass<'d>(&mut self, datums: impl Iterator<Item = &'d Vec<u8>>) -> Result<u64> {
        let mut events = 0u64;
        match &mut self.pipeline {
            None => {
                for datum in datums {
                    events += self.decoder.decode(datum, |e| {
                        black_box(e);
                    })? as u64;
                }
            }
            Some(pipeline) => {
                for datum in datums {
                    let encoder = &mut pipeline.encoder;
                    events += self.decoder.decode(datum, |e| {
                        if keeps(e) {
                            encoder.push(e);
                        }
                    })? as u64;
                    if encoder.rows() >= pipeline.block_rows {
                        pipeline.hand_off()?;
                    }
                }
                pipeline.hand_off()?;
                pipeline.handoff.wait_all_back()?;
            }
        }
        Ok(events)
    }

    fn rows(&self) -> u64 {
        self.pipeline.as_ref().map_or(0, |p| p.rows)
    }

    fn close(self) -> Result<()> {
        match self.pipeline {
            Some(pipeline) => pipeline.handoff.close(),
            None => Ok(()),
        }
    }
}

impl Pipeline {
    fn hand_off(&mut self) -> Result<()> {
        let rows = self.encoder.rows();
        if rows == 0 {
            return Ok(());
        }
        let spare = self.handoff.spare();
        let block = self.encoder.finish(spare);
        self.rows += rows as u64;
        self.handoff.send(block)
    }
}

/// Blocks dealt round-robin to shard threads that hand each buffer back.
struct Handoff {
    shards: Vec<SyncSender<Vec<u8>>>,
    threads: Vec<JoinHandle<()>>,
    returned: Receiver<Vec<u8>>,
    spares: Vec<Vec<u8>>,
    next: usize,
    out: usize,
}

impl Handoff {
    fn start(shards: usize) -> Result<Handoff> {
        if shards == 0 {
            bail!("the rig needs at least one shard");
        }
        let (back, returned) = sync_channel::<Vec<u8>>(shards * 4);
        let mut senders = Vec::new();
        let mut threads = Vec::new();
        for shard in 0..shards {
            let (send, receive) = sync_channel::<Vec<u8>>(2);
            let back = back.clone();
            threads.push(
                std::thread::Builder::new()
                    .name(format!("rig-shard-{shard}"))
                    .spawn(move || {
                        for block in receive {
                            black_box(&block);
                            if back.send(block).is_err() {
                                return;
                            }
                        }
                    })?,
            );
            senders.push(send);
        }
        Ok(Handoff {
            shards: senders,
            threads,
            returned,
            spares: Vec::new(),
            next: 0,
            out: 0,
        })
    }

    /// A buffer back from a shard, or a new one.
    fn spare(&mut self) -> Vec<u8> {
        while let Ok(block) = self.returned.try_recv() {
            self.out -= 1;
            self.spares.push(block);
        }
        self.spares.pop().unwrap_or_default()
    }

    fn send(&mut self, block: Vec<u8>) -> Result<()> {
        self.shards[self.next]
            .send(block)
            .map_err(|_| anyhow!("a rig shard stopped"))?;
        self.next = (self.next + 1) % self.shards.len();
        self.out += 1;
        Ok(())
    }

    fn wait_all_back(&mut self) -> Result<()> {
        while self.out > 0 {
            let block = self
                .returned
                .recv()
                .map_err(|_| anyhow!("a rig shard stopped"))?;
            self.out -= 1;
            self.spares.push(block);
        }
        Ok(())
    }

    fn close(self) -> Result<()> {
        drop(self.shards);
        for thread in self.threads {
            thread.join().map_err(|_| anyhow!("a rig shard panicked"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn there_are_three_decode_arms_and_six_pipeline_arms() {
        let arms = arms();
        assert_eq!(arms.len(), 9);
        assert_eq!(
            arms.iter().filter(|a| a.stage == RigStage::Decode).count(),
            3
        );
        assert!(arms
            .iter()
            .all(|a| (a.stage == RigStage::Pipeline) == a.format.is_some()));
    }
}
