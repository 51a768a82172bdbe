//! How output chunks reach the output topic, and when their input offsets
//! count as done. Neither delivery mode ever stops the reader:
//!
//! - at-least-once produces each chunk as it comes, and a ledger fed by the
//!   delivery reports hands back the offsets of chunks whose every record is
//!   acknowledged, in order, for librdkafka's auto-commit;
//! - exactly-once produces into the open transaction while a committer
//!   thread closes it every commit interval; chunks that arrive while a
//!   transaction commits wait in a buffer and open the next one. A chunk
//!   with no output that moves no input offset (a window still open) opens
//!   no transaction, so an idle stretch commits nothing.
//!
//! The producer is rdkafka's `ThreadedProducer`: its own thread serves the
//! delivery reports as they arrive, blocked in between, so no thread of ours
//! polls or sleeps waiting for acknowledgements.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use rdkafka::consumer::ConsumerGroupMetadata;
use rdkafka::error::KafkaError;
use rdkafka::producer::{BaseRecord, DeliveryResult, Producer, ProducerContext, ThreadedProducer};
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::{ClientContext, Offset, TopicPartitionList};

use crate::chunk::{NextOffset, OutputChunk};
use crate::ledger::Ledger;
use crate::resume::ResumeFloor;
use crate::txn_clock::{CommitTimes, StepWatch};

/// The group membership or the open transaction was lost under the pipeline:
/// a broker restart left the consumer fenced by its own rejoin, or made the
/// transaction coordinator abort. What committed stays; what was open did
/// not, so the pipeline starts over from the committed offsets with a new
/// consumer and producer, as a restarted process would.
#[derive(Debug)]
pub struct Lost(pub String);

impl std::fmt::Display for Lost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Lost {}

/// Whether `err` is, or was caused by, a [`Lost`].
pub fn is_lost(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| cause.is::<Lost>())
}

/// How long a transaction step or the last acknowledgements may take.
pub const TXN_TIMEOUT: Duration = Duration::from_secs(30);
/// Pause before sending again when the producer's queue is full: back
/// pressure from the broker, never part of a run that keeps up.
const QUEUE_FULL_PAUSE: Duration = Duration::from_micros(200);

/// The producer's context: it settles the ledger's chunks from delivery
/// reports and remembers the first failed delivery.
pub struct DeliveryReports {
    ledger: Arc<Ledger>,
}

impl ClientContext for DeliveryReports {}

impl ProducerContext for DeliveryReports {
    /// The output chunk's sequence number.
    type DeliveryOpaque = usize;

    fn delivery(&self, result: &DeliveryResult<'_>, chunk: usize) {
        self.ledger
            .acknowledged(chunk as u64, result.as_ref().err().map(|(e, _)| e));
    }
}

pub type OutputProducer = ThreadedProducer<DeliveryReports>;

/// Creates the producer, whose reports settle `ledger`.
pub fn producer(
    config: &rdkafka::ClientConfig,
    ledger: Arc<Ledger>,
) -> Result<Arc<OutputProducer>> {
    Ok(Arc::new(
        config
            .create_with_context(DeliveryReports { ledger })
            .context("rustpipe: creating the producer")?,
    ))
}

/// Sends every record of `chunk`, each tagged with the chunk's number.
fn send_chunk(producer: &OutputProducer, topic: &str, chunk: &OutputChunk) -> Result<()> {
    for record in chunk.records() {
        let mut out = BaseRecord::<[u8], [u8], usize>::with_opaque_to(topic, chunk.seq as usize)
            .payload(record.payload.unwrap_or_default());
        if let Some(key) = record.key {
            out = out.key(key);
        }
        loop {
            match producer.send(out) {
                Ok(()) => break,
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), back)) => {
                    out = back;
                    std::thread::sleep(QUEUE_FULL_PAUSE);
                }
                Err((err, _)) => return Err(err).context("rustpipe: producing"),
            }
        }
    }
    Ok(())
}

/// Where the writer puts output chunks, by delivery mode.
pub enum Delivery {
    AtLeastOnce {
        producer: Arc<OutputProducer>,
        topic: String,
        ledger: Arc<Ledger>,
    },
    ExactlyOnce(Arc<Transactions>),
}

impl Delivery {
    /// Sends `chunk` on its way; it never waits for acknowledgements.
    pub fn write(&self, chunk: &OutputChunk) -> Result<()> {
        match self {
            Delivery::AtLeastOnce {
                producer,
                topic,
                ledger,
            } => {
                ledger.open(chunk);
                send_chunk(producer, topic, chunk)
            }
            Delivery::ExactlyOnce(transactions) => transactions.write(chunk),
        }
    }
}

/// Exactly-once: one transaction at a time, closed every commit interval by
/// the committer thread while the reader and the stage go on.
pub struct Transactions {
    producer: Arc<OutputProducer>,
    output_topic: String,
    input_topic: String,
    /// The consumer's group metadata, set once it has joined the group, so
    /// the broker can fence a zombie's offsets.
    group: Mutex<Option<ConsumerGroupMetadata>>,
    /// The commit interval: a transaction closes this long after the last
    /// one began closing (or at once if it opened later than that).
    interval: Duration,
    ledger: Arc<Ledger>,
    state: Mutex<TxnState>,
    changed: Condvar,
    /// How long each transaction stayed open and took to commit, printed
    /// when the committer returns: where an exactly-once tail comes from.
    times: Mutex<CommitTimes>,
    /// The broker round trip under way, watched for one that never returns.
    pub step: StepWatch,
    /// Set once the committer has failed, for the reader's check between
    /// polls without the state's lock.
    committer_failed: AtomicBool,
    /// The input offsets of the transactions whose commit was acknowledged.
    committed: Mutex<ResumeFloor>,
}

struct TxnState {
    open: bool,
    opened_at: Instant,
    committing: bool,
    last_commit: Instant,
    /// Input offsets the open transaction covers so far.
    next_offsets: Vec<NextOffset>,
    /// Input offsets committed or in the open transaction: a chunk that
    /// moves none of them and has no output has nothing to commit.
    covered: Vec<NextOffset>,
    /// Output that arrived while a transaction was committing.
    waiting: OutputChunk,
    stopping: bool,
    /// Set with `stopping` when the open transaction must not commit.
    abandoned: bool,
    failed: Option<String>,
}

impl Transactions {
    pub fn new(
        producer: Arc<OutputProducer>,
        output_topic: String,
        input_topic: String,
        interval: Duration,
        ledger: Arc<Ledger>,
    ) -> Transactions {
        let now = Instant::now();
        Transactions {
            producer,
            output_topic,
            input_topic,
            group: Mutex::new(None),
            interval,
            ledger,
            state: Mutex::new(TxnState {
                open: false,
                opened_at: now,
                committing: false,
                last_commit: now,
                next_offsets: Vec::new(),
                covered: Vec::new(),
                waiting: OutputChunk::default(),
                stopping: false,
                abandoned: false,
                failed: None,
            }),
            changed: Condvar::new(),
            times: Mutex::new(CommitTimes::new()),
            step: StepWatch::default(),
            committer_failed: AtomicBool::new(false),
            committed: Mutex::new(ResumeFloor::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, TxnState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes the consumer's group metadata, once it has its assignment.
    pub fn joined(&self, group: ConsumerGroupMetadata) {
        *self.group.lock().unwrap_or_else(|p| p.into_inner()) = Some(group);
    }

    /// Fails once the committer has: the reader checks between polls, as
    /// records may not come until it stops. A consumer that rejoined asks
    /// for its committed offsets as stable, and the broker holds them back
    /// while a transaction with offsets of the group is open, as the failed
    /// one stays until this producer goes (or its 60 s timeout).
    pub fn check(&self) -> Result<()> {
        if !self.committer_failed.load(Ordering::Acquire) {
            return Ok(());
        }
        match &self.lock().failed {
            Some(err) => bail!("rustpipe: the committer failed: {err}"),
            None => Ok(()),
        }
    }

    /// Produces `chunk` into the open transaction (opening one if none is),
    /// or keeps it for the next while one commits.
    fn write(&self, chunk: &OutputChunk) -> Result<()> {
        let mut state = self.lock();
        if let Some(err) = &state.failed {
            bail!("{err}");
        }
        if state.committing {
            state.waiting.append(chunk);
            return Ok(());
        }
        self.produce(&mut state, chunk)
    }

    /// Produces `chunk` inside the open transaction, opening one if needed,
    /// unless it has neither output nor an input offset to move.
    fn produce(&self, state: &mut TxnState, chunk: &OutputChunk) -> Result<()> {
        let no_output = chunk.records().next().is_none();
        if no_output && !moves_past(&state.covered, chunk.next_offsets()) {
            return Ok(());
        }
        if !state.open {
            self.producer
                .begin_transaction()
                .map_err(|err| Lost(format!("rustpipe: beginning a transaction: {err}")))?;
            state.open = true;
            state.opened_at = Instant::now();
            self.changed.notify_all();
        }
        self.ledger.open(chunk);
        send_chunk(&self.producer, &self.output_topic, chunk)?;
        for next in chunk.next_offsets() {
            crate::chunk::advance(&mut state.next_offsets, next.partition, next.offset);
            crate::chunk::advance(&mut state.covered, next.partition, next.offset);
        }
        Ok(())
    }

    /// The committer thread's loop: closes the open transaction when its
    /// interval is up, until `stop` and nothing is left open.
    pub fn run_commits(&self) -> Result<()> {
        let result = self.commit_loop();
        let times = self.times.lock().unwrap_or_else(|p| p.into_inner());
        if !times.commit.is_empty() {
            eprintln!("{}", times.summary());
        }
        if let Err(err) = &result {
            self.lock().failed.get_or_insert_with(|| format!("{err:#}"));
            self.committer_failed.store(true, Ordering::Release);
        }
        result
    }

    fn commit_loop(&self) -> Result<()> {
        let mut state = self.lock();
        loop {
            if state.abandoned {
                return Ok(());
            }
            if !state.open {
                if state.stopping {
                    return Ok(());
                }
                state = self.wait(state, None);
                continue;
            }
            let due = (state.last_commit + self.interval).max(state.opened_at);
            let now = Instant::now();
            if !state.stopping && now < due {
                state = self.wait(state, Some(due - now));
                continue;
            }
            state.committing = true;
            let state_opened_at = state.opened_at;
            let next_offsets = std::mem::take(&mut state.next_offsets);
            let offsets = self.offset_list(&next_offsets)?;
            drop(state);
            let started = Instant::now();
            CommitTimes::record(
                &mut self.times.lock().unwrap_or_else(|p| p.into_inner()).open,
                started - state_opened_at,
            );
            let committed = self.commit(&offsets);
            if committed.is_ok() {
                self.committed
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .raise(&next_offsets);
            }
            state = self.lock();
            state.committing = false;
            state.open = false;
            state.last_commit = started;
            committed?;
            if !state.waiting.is_empty() {
                let waiting = std::mem::take(&mut state.waiting);
                self.produce(&mut state, &waiting)?;
                state.waiting = waiting;
                state.waiting.clear();
            }
        }
    }

    fn wait<'a>(
        &self,
        state: MutexGuard<'a, TxnState>,
        timeout: Option<Duration>,
    ) -> MutexGuard<'a, TxnState> {
        match timeout {
            Some(t) => {
                self.changed
                    .wait_timeout(state, t)
                    .unwrap_or_else(|p| p.into_inner())
                    .0
            }
            None => self.changed.wait(state).unwrap_or_else(|p| p.into_inner()),
        }
    }

    fn offset_list(&self, next_offsets: &[NextOffset]) -> Result<TopicPartitionList> {
        let mut list = TopicPartitionList::with_capacity(next_offsets.len());
        for next in next_offsets {
            list.add_partition_offset(
                &self.input_topic,
                next.partition,
                Offset::Offset(next.offset),
            )?;
        }
        Ok(list)
    }

    /// Adds the input offsets to the transaction and commits it. A failure
    /// of either step loses the transaction: the pipeline starts over.
    fn commit(&self, offsets: &TopicPartitionList) -> Result<()> {
        let started = Instant::now();
        if offsets.count() > 0 {
            let group = self.group.lock().unwrap_or_else(|p| p.into_inner());
            let group = group
                .as_ref()
                .ok_or_else(|| anyhow!("rustpipe: committing before joining the group"))?;
            let _step = self.step.begin("adding offsets to the transaction");
            self.producer
                .send_offsets_to_transaction(offsets, group, TXN_TIMEOUT)
                .map_err(|err| {
                    Lost(format!(
                        "rustpipe: adding offsets to the transaction: {err}"
                    ))
                })?;
        }
        let offsets_added = Instant::now();
        {
            let _step = self.step.begin("committing the transaction");
            commit_transaction(&self.producer)?;
        }
        {
            let mut times = self.times.lock().unwrap_or_else(|p| p.into_inner());
            CommitTimes::record(&mut times.offsets, offsets_added - started);
            CommitTimes::record(&mut times.commit, offsets_added.elapsed());
        }
        if let Some(err) = self.ledger.failure() {
            return Err(Lost(format!("rustpipe: a record was not delivered: {err}")).into());
        }
        // Every record of the transaction is acknowledged once it commits.
        self.ledger.take_settled(&mut Vec::new())?;
        Ok(())
    }

    /// The input offsets that acknowledged commits of this life moved to.
    pub fn committed(&self) -> ResumeFloor {
        self.committed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Asks the committer to commit what is open and return.
    pub fn stop(&self) {
        self.lock().stopping = true;
        self.changed.notify_all();
    }

    /// Asks the committer to return leaving the open transaction as it is,
    /// after the reader failed: it may hold part of a chunk whose offsets it
    /// does not, and the next producer with this transactional id aborts it.
    pub fn abandon(&self) {
        let mut state = self.lock();
        state.stopping = true;
        state.abandoned = true;
        self.changed.notify_all();
    }
}

/// Whether any of `next_offsets` lies past what `covered` holds for its
/// partition.
fn moves_past(covered: &[NextOffset], next_offsets: &[NextOffset]) -> bool {
    next_offsets.iter().any(|next| {
        !covered
            .iter()
            .any(|c| c.partition == next.partition && c.offset >= next.offset)
    })
}

/// Commits the producer's open transaction with librdkafka's own call.
///
/// rdkafka's `commit_transaction` first calls its `flush`, which serves
/// events with a `poll` that only returns at its 100 ms deadline, so a commit
/// with any record in flight cost ~100 ms. librdkafka's commit waits for
/// the outstanding records itself, on a condition variable, while the
/// producer's thread serves their delivery reports.
fn commit_transaction(producer: &OutputProducer) -> Result<()> {
    use rdkafka::bindings;
    let ptr = producer.client().native_ptr();
    // SAFETY: `ptr` is the live producer's handle; the error returned, if
    // any, is ours to read and destroy.
    unsafe {
        let error = bindings::rd_kafka_commit_transaction(ptr, TXN_TIMEOUT.as_millis() as i32);
        if error.is_null() {
            return Ok(());
        }
        let text = std::ffi::CStr::from_ptr(bindings::rd_kafka_error_string(error))
            .to_string_lossy()
            .into_owned();
        bindings::rd_kafka_error_destroy(error);
        Err(Lost(format!("rustpipe: committing a transaction: {text}")).into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(offset: i64) -> NextOffset {
        NextOffset {
            partition: 0,
            offset,
        }
    }

    #[test]
    fn only_an_offset_past_the_covered_one_moves() {
        assert!(moves_past(&[], &[at(3)]));
        assert!(!moves_past(&[at(3)], &[at(3)]));
        assert!(moves_past(&[at(3)], &[at(4)]));
        assert!(!moves_past(&[at(3)], &[]));
        let other = NextOffset {
            partition: 1,
            offset: 0,
        };
        assert!(moves_past(&[at(3)], &[other]));
    }
}
