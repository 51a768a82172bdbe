//! The workload's step, run inline on the reader's thread or spread over N
//! workers (a step that keeps state across chunks runs inline only).
//!
//! With `parallelism` N > 1, chunk i of a partition goes to worker i mod N,
//! and one writer thread takes the workers' outputs back in the same turn,
//! so the output leaves in input order: the order of every key is kept, as
//! it is in the partition, and one transaction still covers whole chunks
//! and their input offsets. Chunks are handed over whole, since the input
//! records carry no Kafka key to hash, and a record's fields are only known
//! once a worker has decoded it.
//!
//! Chunks travel as pairs (an input chunk and the output chunk it becomes)
//! from a fixed pool, through bounded channels: the hand-off allocates
//! nothing, and a full pool holds the reader back.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use anyhow::{anyhow, bail, Result};

use crate::chunk::{InputChunk, OutputChunk};
use crate::settings::{PipelineOptions, Workload};
use crate::step::Step;

/// An input chunk and the output chunk the step makes of it.
#[derive(Default)]
struct Job {
    input: InputChunk,
    output: OutputChunk,
}

/// Chunks in flight per worker: one being filled, one in the step, one
/// being written.
const JOBS_PER_WORKER: usize = 3;

/// Where the reader puts its records: a chunk being filled, and a way to
/// send it through the step to the writer.
pub struct Stages<W> {
    job: Job,
    next_seq: u64,
    mode: Mode<W>,
}

enum Mode<W> {
    Inline {
        step: Step,
        write: W,
    },
    Sharded {
        to_workers: Vec<SyncSender<Job>>,
        free: Receiver<Job>,
    },
}

impl<W: FnMut(&OutputChunk) -> Result<()>> Stages<W> {
    /// The chunk being filled.
    pub fn chunk(&mut self) -> &mut InputChunk {
        &mut self.job.input
    }

    /// Sends the chunk being filled on, and starts the next.
    pub fn dispatch(&mut self) -> Result<()> {
        match &mut self.mode {
            Mode::Inline { step, write } => {
                step.process(&self.job.input, &mut self.job.output)?;
                write(&self.job.output)?;
            }
            Mode::Sharded { to_workers, free } => {
                let next = free.recv().map_err(|_| stopped())?;
                let full = std::mem::replace(&mut self.job, next);
                let worker = (self.next_seq % to_workers.len() as u64) as usize;
                to_workers[worker].send(full).map_err(|_| stopped())?;
            }
        }
        self.next_seq += 1;
        self.job.input.reset(self.next_seq);
        Ok(())
    }
}

fn stopped() -> anyhow::Error {
    anyhow!("rustpipe: a shard stopped")
}

/// Runs `read` with `workload`'s step `parallelism` wide: inline for 1, else
/// on worker threads with a writer thread calling `write` in input order.
/// Returns once `read` has returned and every chunk it dispatched is written.
pub fn run<W, R>(
    parallelism: usize,
    workload: Workload,
    options: &PipelineOptions,
    write: W,
    read: impl FnOnce(&mut Stages<W>) -> Result<R>,
) -> Result<R>
where
    W: FnMut(&OutputChunk) -> Result<()> + Send,
{
    let step = Step::new(workload, options)?;
    if parallelism <= 1 {
        let mut stages = Stages {
            job: Job::default(),
            next_seq: 0,
            mode: Mode::Inline { step, write },
        };
        return read(&mut stages);
    }
    if !step.shardable() {
        bail!(
            "rustpipe: {} keeps state across chunks and runs with parallelism 1, not {parallelism}",
            workload.as_str()
        );
    }
    let mut steps = vec![step];
    for _ in 1..parallelism {
        steps.push(Step::new(workload, options)?);
    }
    let jobs = parallelism * JOBS_PER_WORKER;
    let (free_tx, free) = sync_channel::<Job>(jobs);
    for _ in 1..jobs {
        free_tx.send(Job::default()).map_err(|_| stopped())?;
    }
    std::thread::scope(|scope| {
        let mut to_workers = Vec::with_capacity(parallelism);
        let mut from_workers = Vec::with_capacity(parallelism);
        let mut workers = Vec::with_capacity(parallelism);
        for mut step in steps {
            let (job_tx, job_rx) = sync_channel::<Job>(jobs);
            let (done_tx, done_rx) = sync_channel::<Job>(jobs);
            workers.push(scope.spawn(move || -> Result<()> {
                for mut job in job_rx {
                    step.process(&job.input, &mut job.output)?;
                    done_tx.send(job).map_err(|_| stopped())?;
                }
                Ok(())
            }));
            to_workers.push(job_tx);
            from_workers.push(done_rx);
        }
        let writer = scope.spawn(move || -> Result<()> {
            let mut write = write;
            // Round-robin, as the reader dealt: input order.
            for worker in (0..from_workers.len()).cycle() {
                let Ok(job) = from_workers[worker].recv() else {
                    break;
                };
                write(&job.output)?;
                // The reader may be gone; then nothing needs the job back.
                let _ = free_tx.send(job);
            }
            Ok(())
        });
        let mut stages = Stages {
            job: Job::default(),
            next_seq: 0,
            mode: Mode::Sharded { to_workers, free },
        };
        let read = read(&mut stages);
        drop(stages);
        match first_failure(workers.into_iter().chain(std::iter::once(writer))) {
            Some(err) => Err(err),
            None => read,
        }
    })
}

/// Joins every thread; the first error among them, which explains the
/// reader's `a shard stopped`.
fn first_failure<'scope>(
    handles: impl Iterator<Item = std::thread::ScopedJoinHandle<'scope, Result<()>>>,
) -> Option<anyhow::Error> {
    let mut failure = None;
    for handle in handles {
        let joined = handle
            .join()
            .unwrap_or_else(|_| Err(anyhow!("rustpipe: a shard panicked")));
        if let (Err(err), None) = (joined, &failure) {
            failure = Some(err);
        }
    }
    failure
}
