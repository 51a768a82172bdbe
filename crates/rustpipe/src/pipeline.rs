//! The pipeline: a reader that never waits on delivery, the workload's step
//! (inline or sharded), and the delivery mode's writer.
//!
//! The reader blocks in the consumer's own poll while there is nothing to
//! read, and otherwise takes every record already fetched into one chunk,
//! which it hands on as soon as the consumer has no more: a chunk is whatever
//! arrived together, so no record waits for a batch to fill or a timer to
//! fire, and a backlog is read in chunks of up to CHUNK_MAX_RECORDS.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::producer::Producer;
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::{Offset, TopicPartitionList};

use crate::chunk::NextOffset;
use crate::delivery::{self, is_lost, Delivery, Lost, Transactions, TXN_TIMEOUT};
use crate::ledger::Ledger;
use crate::resume::{ResumeFloor, FLOOR_VAR};
use crate::settings::{self, PipelineSettings};
use crate::shards::{self, Stages};

/// The line rustpipe prints once it owns its input partitions.
const READY_LINE: &str = "rustpipe ready";
/// The most records one chunk takes from a backlog.
pub const CHUNK_MAX_RECORDS: usize = 2048;
/// How long the reader blocks in the consumer with nothing to read; what it
/// does between (storing acknowledged offsets) can wait that long.
const IDLE_POLL: Duration = Duration::from_millis(100);

/// How many times over the process's life the pipeline starts over after
/// losing its group or transaction before it gives up: a pipeline that keeps
/// losing them is failing, not riding through a broker restart.
const MAX_START_OVERS: u32 = 10;
/// How long a transaction step may run before rustpipe takes its client for
/// stuck: the step's own timeout, which librdkafka passes on, and a margin.
const STUCK_AFTER: Duration = Duration::from_secs(TXN_TIMEOUT.as_secs() + 5);
/// How many times rustpipe restarts itself over a stuck client before it
/// gives up; counted across the restarts in this variable.
const STUCK_RESTARTS_VAR: &str = "RUSTPIPE_STUCK_RESTARTS";
const MAX_STUCK_RESTARTS: u32 = 3;

/// Runs the pipeline until `stop` is set, starting it over from the
/// committed offsets when its group or transaction is lost (and never before
/// what its own acknowledged transactions committed).
pub fn run(settings: &PipelineSettings, stop: &AtomicBool) -> Result<()> {
    let (consumer_config, producer_config) =
        (settings.consumer_config(), settings.producer_config());
    println!(
        "{}",
        settings.effective_client_config(&consumer_config, &producer_config)
    );
    let started = Instant::now();
    let mut start_overs = 0;
    let mut floor = ResumeFloor::from_env()?;
    loop {
        let life = Life {
            started,
            start_overs,
        };
        match run_once(
            settings,
            &consumer_config,
            &producer_config,
            stop,
            life,
            &mut floor,
        ) {
            Err(err) if is_lost(&err) && !stop.load(Ordering::Relaxed) => {
                start_overs += 1;
                if start_overs > MAX_START_OVERS {
                    return Err(err.context(format!(
                        "rustpipe: gave up after starting over {MAX_START_OVERS} times"
                    )));
                }
                eprintln!(
                    "{err:#}; starting over from the committed offsets ({}, the old clients closed)",
                    life.clock()
                );
            }
            done => return done,
        }
    }
}

/// Which life of the pipeline this is, and when the process began: a life
/// after a start over logs when each of its steps is done, so a log tells
/// where a recovery waited.
#[derive(Clone, Copy)]
struct Life {
    started: Instant,
    start_overs: u32,
}

impl Life {
    /// Time since the process began, for a log line.
    fn clock(&self) -> String {
        format!(
            "{:.1} s into the process",
            self.started.elapsed().as_secs_f64()
        )
    }

    /// Logs `step` done, in a life after a start over.
    fn step_done(&self, step: &str) {
        if self.start_overs > 0 {
            eprintln!("rustpipe: {step} again, {}", self.clock());
        }
    }
}

/// One life of the pipeline: a consumer and a producer from joining the
/// group until `stop`, or until an error. The input offsets its acknowledged
/// transactions committed raise `floor` for the next life.
fn run_once(
    settings: &PipelineSettings,
    consumer_config: &rdkafka::ClientConfig,
    producer_config: &rdkafka::ClientConfig,
    stop: &AtomicBool,
    life: Life,
    floor: &mut ResumeFloor,
) -> Result<()> {
    let consumer: BaseConsumer = consumer_config
        .create()
        .context("rustpipe: creating the consumer")?;
    let ledger = Arc::new(Ledger::default());
    let producer = delivery::producer(producer_config, ledger.clone())?;
    let delivery = match settings.delivery {
        settings::Delivery::AtLeastOnce => Delivery::AtLeastOnce {
            producer: producer.clone(),
            topic: settings.output_topic.clone(),
            ledger: ledger.clone(),
        },
        settings::Delivery::ExactlyOnce => {
            producer
                .init_transactions(TXN_TIMEOUT)
                .context("rustpipe: initialising transactions")?;
            life.step_done("transactions initialised");
            Delivery::ExactlyOnce(Arc::new(Transactions::new(
                producer.clone(),
                settings.output_topic.clone(),
                settings.input_topic.clone(),
                Duration::from_millis(settings.commit_interval_ms),
                ledger.clone(),
            )))
        }
    };
    consumer
        .subscribe(&[&settings.input_topic])
        .context("rustpipe: subscribing to the input topic")?;

    let reader = Reader {
        consumer: &consumer,
        settings,
        ledger: &ledger,
        delivery: &delivery,
        life,
        floor: floor.clone(),
    };
    let finished = AtomicBool::new(false);
    let lived = std::thread::scope(|scope| {
        if let Delivery::ExactlyOnce(transactions) = &delivery {
            scope.spawn(|| watch_steps(transactions, stop, &finished, &reader.floor));
        }
        let committer = match &delivery {
            Delivery::ExactlyOnce(transactions) => Some(scope.spawn(|| transactions.run_commits())),
            Delivery::AtLeastOnce { .. } => None,
        };
        let read = shards::run(
            settings.parallelism,
            settings.workload,
            &settings.options,
            |chunk| delivery.write(chunk),
            |stages| reader.read(stages, stop),
        );
        let committed = committer.map(|handle| {
            if let Delivery::ExactlyOnce(transactions) = &delivery {
                if read.is_ok() {
                    transactions.stop();
                } else {
                    transactions.abandon();
                }
            }
            handle
                .join()
                .unwrap_or_else(|_| Err(anyhow!("rustpipe: the committer panicked")))
        });
        finished.store(true, Ordering::Relaxed);
        match committed {
            // The reader only saw the committer's failure second hand.
            Some(Err(err)) if is_lost(&err) => Err(err),
            committed => read.and(committed.unwrap_or(Ok(()))),
        }
    });
    if let Delivery::ExactlyOnce(transactions) = &delivery {
        floor.raise_to(&transactions.committed());
    }
    lived?;
    if matches!(delivery, Delivery::AtLeastOnce { .. }) && !settings.options.never_commit {
        reader.final_commit()?;
    }
    Ok(())
}

/// Watches the committer's broker round trips until `finished`. One that
/// outlives its timeout is librdkafka 2.12's coordinator request waiting on
/// a broker it has decommissioned, which nothing wakes (librdkafka issues
/// 5456 and 5511, fixed after 2.12): a leader's failover that also moved the
/// group's coordinator leaves it there. As a supervisor would, rustpipe
/// then restarts itself from the committed offsets; while stopping, it
/// exits with the transaction open, which its next producer aborts.
fn watch_steps(
    transactions: &Transactions,
    stop: &AtomicBool,
    finished: &AtomicBool,
    floor: &ResumeFloor,
) {
    while !finished.load(Ordering::Relaxed) {
        if let Some((step, took)) = transactions.step.overdue(STUCK_AFTER) {
            eprintln!(
                "rustpipe: {step} has not returned after {:.0} s, past its {} s timeout: \
                 librdkafka's request waits on a broker it has let go",
                took.as_secs_f64(),
                TXN_TIMEOUT.as_secs()
            );
            if stop.load(Ordering::Relaxed) {
                eprintln!("rustpipe: stopping with the transaction open");
                std::process::exit(1);
            }
            let mut handed_on = floor.clone();
            handed_on.raise_to(&transactions.committed());
            restart_process(&handed_on);
        }
        std::thread::sleep(IDLE_POLL);
    }
}

/// Replaces this process with a new run of rustpipe: the same executable,
/// arguments and environment, and the same pid, so the suite still watches
/// it. The stuck client goes with the old image; the new one starts from the
/// committed offsets (never before `floor`), and its producer's init aborts
/// the open transaction.
fn restart_process(floor: &ResumeFloor) -> ! {
    use std::os::unix::process::CommandExt;
    let restarts: u32 = std::env::var(STUCK_RESTARTS_VAR)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    if restarts >= MAX_STUCK_RESTARTS {
        eprintln!("rustpipe: gave up after restarting itself {restarts} times");
        std::process::exit(1);
    }
    eprintln!(
        "rustpipe: restarting itself from the committed offsets (restart {})",
        restarts + 1
    );
    let mut args = std::env::args_os();
    let mut command = std::process::Command::new("/proc/self/exe");
    if let Some(name) = args.next() {
        command.arg0(name);
    }
    let err = command
        .args(args)
        .env(STUCK_RESTARTS_VAR, (restarts + 1).to_string())
        .env(FLOOR_VAR, floor.to_env_value())
        .exec();
    eprintln!("rustpipe: restarting itself failed: {err}");
    std::process::exit(1);
}

struct Reader<'a> {
    consumer: &'a BaseConsumer,
    settings: &'a PipelineSettings,
    ledger: &'a Ledger,
    delivery: &'a Delivery,
    life: Life,
    /// What earlier lives committed, below which nothing is read again.
    floor: ResumeFloor,
}

impl Reader<'_> {
    /// Reads until `stop`, handing each chunk to `stages`.
    fn read<W>(&self, stages: &mut Stages<W>, stop: &AtomicBool) -> Result<()>
    where
        W: FnMut(&crate::chunk::OutputChunk) -> Result<()>,
    {
        let mut ready = false;
        let mut acknowledged = Vec::new();
        let mut pause = Pause::new(&self.settings.options);
        let mut floor = self.floor.guard();
        while !stop.load(Ordering::Relaxed) {
            let timeout = if stages.chunk().is_empty() {
                IDLE_POLL
            } else {
                Duration::ZERO
            };
            match self.consumer.poll(timeout) {
                Some(Ok(message)) if floor.skips(message.partition(), message.offset()) => {}
                Some(Ok(message)) => {
                    let chunk = stages.chunk();
                    chunk.push(
                        message.partition(),
                        message.offset(),
                        message.key(),
                        message.payload(),
                    );
                    if chunk.len() >= CHUNK_MAX_RECORDS {
                        stages.dispatch()?;
                    }
                    if let Some(pause) = pause.after_one_record() {
                        if !stages.chunk().is_empty() {
                            stages.dispatch()?;
                        }
                        std::thread::sleep(pause);
                    }
                }
                Some(Err(err)) if recoverable(&err) => {
                    eprintln!("rustpipe: {err} (the client reconnects by itself)")
                }
                // librdkafka's one fatal consumer error: a static member
                // fenced, by its own rejoin after a broker restart.
                Some(Err(err @ KafkaError::MessageConsumptionFatal(_))) => {
                    return Err(Lost(format!("rustpipe: the consumer was fenced: {err}")).into())
                }
                Some(Err(err)) => return Err(err).context("rustpipe: consuming"),
                None if !stages.chunk().is_empty() => stages.dispatch()?,
                None => {}
            }
            if !ready {
                ready = self.joined()?;
            }
            self.store_acknowledged(&mut acknowledged)?;
            if let Delivery::ExactlyOnce(transactions) = self.delivery {
                transactions.check()?;
            }
        }
        if !stages.chunk().is_empty() {
            stages.dispatch()?;
        }
        Ok(())
    }

    /// Prints the ready line once the consumer owns partitions, and hands
    /// the transactions its group metadata.
    fn joined(&self) -> Result<bool> {
        if self.consumer.assignment()?.elements().is_empty() {
            return Ok(false);
        }
        self.life.step_done("partitions assigned");
        if let Delivery::ExactlyOnce(transactions) = self.delivery {
            transactions.joined(
                self.consumer
                    .group_metadata()
                    .context("rustpipe: no consumer group metadata")?,
            );
        }
        println!("{READY_LINE}");
        Ok(true)
    }

    /// At-least-once: stores the offsets of the chunks now wholly
    /// acknowledged, for the next auto-commit.
    fn store_acknowledged(&self, acknowledged: &mut Vec<NextOffset>) -> Result<()> {
        if !matches!(self.delivery, Delivery::AtLeastOnce { .. }) {
            return Ok(());
        }
        if self.ledger.take_settled(acknowledged)? && !self.settings.options.never_commit {
            let mut offsets = TopicPartitionList::with_capacity(acknowledged.len());
            for next in acknowledged.iter() {
                offsets.add_partition_offset(
                    &self.settings.input_topic,
                    next.partition,
                    Offset::Offset(next.offset),
                )?;
            }
            match self.consumer.store_offsets(&offsets) {
                Ok(()) => {}
                // The partition is no longer assigned: a broker restart took
                // the group from under the consumer.
                Err(err @ KafkaError::StoreOffset(RDKafkaErrorCode::State)) => {
                    return Err(Lost(format!(
                        "rustpipe: storing offsets of a partition no longer assigned: {err}"
                    ))
                    .into())
                }
                Err(err) => return Err(err).context("rustpipe: storing offsets"),
            }
        }
        Ok(())
    }

    /// At-least-once: waits for the last acknowledgements, then commits
    /// every stored offset before leaving.
    fn final_commit(&self) -> Result<()> {
        self.ledger.wait_settled(TXN_TIMEOUT)?;
        self.store_acknowledged(&mut Vec::new())?;
        match self.consumer.commit_consumer_state(CommitMode::Sync) {
            Ok(()) | Err(KafkaError::ConsumerCommit(RDKafkaErrorCode::NoOffset)) => Ok(()),
            Err(err) => Err(err).context("rustpipe: final commit"),
        }
    }
}

/// The `pause_after_records` test knob: one pause of the reader, once it
/// has read that many records.
struct Pause {
    after_records: u64,
    duration: Duration,
    read: u64,
}

impl Pause {
    fn new(options: &settings::PipelineOptions) -> Pause {
        Pause {
            after_records: options.pause_after_records,
            duration: Duration::from_millis(options.pause_ms),
            read: 0,
        }
    }

    /// Counts one record read; the pause to take now, once.
    fn after_one_record(&mut self) -> Option<Duration> {
        if self.after_records == 0 {
            return None;
        }
        self.read += 1;
        (self.read == self.after_records).then_some(self.duration)
    }
}

/// A consumer error the client recovers from by itself: librdkafka reports
/// its broker connections going down (a broker restart) as errors that need
/// no action, and fatal ones apart.
pub(crate) fn recoverable(err: &KafkaError) -> bool {
    matches!(err, KafkaError::MessageConsumption(_))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lost group or transaction is seen under the context the error
    /// gathers on its way up; any other failure is not, and stays fatal.
    #[test]
    fn the_reader_pauses_once_after_its_records() {
        let options = settings::PipelineOptions {
            pause_after_records: 3,
            pause_ms: 1000,
            ..settings::PipelineOptions::default()
        };
        let mut pause = Pause::new(&options);
        let pauses: Vec<Option<Duration>> = (0..6).map(|_| pause.after_one_record()).collect();
        assert_eq!(
            pauses,
            vec![None, None, Some(Duration::from_secs(1)), None, None, None]
        );
        let mut never = Pause::new(&settings::PipelineOptions::default());
        assert!((0..10).all(|_| never.after_one_record().is_none()));
    }

    #[test]
    fn a_loss_is_seen_through_its_context() {
        let lost = anyhow::Error::from(Lost("rustpipe: committing a transaction".into()))
            .context("rustpipe: the committer");
        assert!(is_lost(&lost));
        let fatal = anyhow!("rustpipe: a record older than the open window").context("step");
        assert!(!is_lost(&fatal));
    }
}
