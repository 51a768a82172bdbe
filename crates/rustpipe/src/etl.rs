//! The avro-etl pipeline: Kafka (Avro batch datums) to ClickHouse. Each
//! message is decoded with the chosen decoder, its events become rows
//! (flat_map), health checks are dropped (filter), and the rest are encoded
//! into the current insert block (RowBinary or Native). A block is sent
//! once it holds `block_rows` rows or its first row is `flush` old; up to
//! `max_in_flight` inserts run at once on a tokio runtime, and with all of
//! them busy the consumer is paused until one is acknowledged (each such
//! wait is a backpressure pause). Offsets are stored once every block up to
//! and including a message's is acknowledged, so a crash repeats rows but
//! never loses one (at-least-once).
//!
//! The raw arm (no decoder) passes each message through as one row of its
//! sequence number and bytes, to show what the sink takes without decoding.
//!
//! Each acknowledged insert is logged as one JSON line (BENCH_SINK_INSERT_LOG):
//! when it was acknowledged, how long it took, its rows, and the rows'
//! end-to-end latency (acknowledgement minus intended time) as a histogram,
//! so the suite can take exactly the inserts of its window.

use std::collections::{BTreeMap, VecDeque};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{anyhow, bail, Context, Result};
use messages::histogram;
use messages::insert::InsertAck;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};

use crate::avro::{Decoder, DecoderKind};
use crate::rows::{keeps, BlockEncoder, RowFormat};
use crate::settings::{self, PipelineSettings};

const READY_LINE: &str = "rustpipe ready";
/// How long the reader waits in the consumer when nothing is pending.
const IDLE_POLL: Duration = Duration::from_millis(100);
/// How long the last inserts may take when the pipeline stops.
const STOP_TIMEOUT: Duration = Duration::from_secs(60);

/// The sink and the arm, from BENCH_SINK_* and BENCH_ETL_*.
#[derive(Debug, Clone)]
pub struct EtlSettings {
    pub url: String,
    pub user: Option<String>,
    pub password: Option<String>,
    pub database: String,
    pub table: String,
    pub insert_log: PathBuf,
    /// None: the raw arm, each message passed through as one row.
    pub decoder: Option<DecoderKind>,
    pub format: RowFormat,
    /// Events per message, as gendata writes them: a datum holding another
    /// count is an error, not a silent difference.
    pub events: usize,
    pub block_rows: usize,
    pub flush: Duration,
    pub max_in_flight: usize,
}

fn var(name: &str) -> Result<String> {
    std::env::var(name).map_err(|_| anyhow!("rustpipe: {name} is not set (the suite sets it)"))
}

fn number(name: &str) -> Result<u64> {
    let text = var(name)?;
    text.parse()
        .with_context(|| format!("rustpipe: {name} `{text}` is not a whole number"))
}

impl EtlSettings {
    pub fn from_env() -> Result<EtlSettings> {
        Ok(EtlSettings {
            url: var("BENCH_SINK_URL")?,
            user: std::env::var("BENCH_SINK_USER").ok(),
            password: std::env::var("BENCH_SINK_PASSWORD").ok(),
            database: var("BENCH_SINK_DATABASE")?,
            table: var("BENCH_SINK_TABLE")?,
            insert_log: PathBuf::from(var("BENCH_SINK_INSERT_LOG")?),
            decoder: match var("BENCH_ETL_DECODER")?.as_str() {
                "none" => None,
                decoder => Some(decoder.parse()?),
            },
            format: var("BENCH_ETL_FORMAT")?.parse()?,
            events: number("BENCH_ETL_EVENTS")? as usize,
            block_rows: number("BENCH_ETL_BLOCK_ROWS")?.max(1) as usize,
            flush: Duration::from_millis(number("BENCH_ETL_FLUSH_MS")?),
            max_in_flight: number("BENCH_ETL_MAX_IN_FLIGHT")?.max(1) as usize,
        })
    }

    fn client(&self) -> clickhouse::Client {
        let mut client = clickhouse::Client::default()
            .with_url(&self.url)
            .with_database(&self.database)
            .with_compression(clickhouse::Compression::None)
            // The rows are written by our own encoders; the crate's schema
            // check needs a format old servers lack.
            .with_validation(false);
        if let Some(user) = &self.user {
            client = client.with_user(user);
        }
        if let Some(password) = &self.password {
            client = client.with_password(password);
        }
        client
    }
}

/// Now, microseconds since the Unix epoch: the clock gendata stamps with.
fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

/// A block handed to an insert, until it is acknowledged.
struct SentBlock {
    id: u64,
    /// The next offset of each partition whose messages the block covers.
    offsets: BTreeMap<i32, i64>,
    acked: bool,
}

/// What an insert task reports.
struct Completion {
    id: u64,
    result: Result<Duration, clickhouse::error::Error>,
    ack_us: i64,
}

/// The block being filled.
struct OpenBlock {
    encoder: BlockEncoder,
    started: Option<Instant>,
    offsets: BTreeMap<i32, i64>,
    /// (intended time, rows) of each message with rows in the block.
    stamps: Vec<(i64, u32)>,
}

impl OpenBlock {
    /// An empty block of decoded rows, or of raw messages.
    fn new(decoded: bool, format: RowFormat) -> OpenBlock {
        OpenBlock {
            encoder: if decoded {
                BlockEncoder::new(format)
            } else {
                BlockEncoder::raw(format)
            },
            started: None,
            offsets: BTreeMap::new(),
            stamps: Vec::new(),
        }
    }

    /// Adds one message's rows (decoded, or the message as one raw row)
    /// and moves its partition's offset.
    fn add(
        &mut self,
        message: &rdkafka::message::BorrowedMessage<'_>,
        decoder: Option<&Decoder>,
        events: usize,
    ) -> Result<()> {
        let rows_before = self.encoder.rows();
        let Some(datum) = message.payload() else {
            bail!("rustpipe: a message without a payload on the input");
        };
        let ts_us = match decoder {
            Some(decoder) => decode_into(decoder, datum, events, &mut self.encoder)?,
            None => pass_through(message, datum, &mut self.encoder)?,
        };
        let rows = (self.encoder.rows() - rows_before) as u32;
        if rows > 0 {
            self.stamps.push((ts_us, rows));
        }
        self.started.get_or_insert_with(Instant::now);
        self.offsets
            .insert(message.partition(), message.offset() + 1);
        Ok(())
    }
}

/// The sink's runtime and its ClickHouse client, the server checked
/// reachable first.
fn sink_runtime(etl: &EtlSettings) -> Result<(tokio::runtime::Runtime, clickhouse::Client)> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("rustpipe-sink")
        .enable_all()
        .build()
        .context("rustpipe: starting the sink's runtime")?;
    let client = etl.client();
    runtime
        .block_on(client.query("SELECT 1").execute())
        .map_err(|err| {
            anyhow!(
                "rustpipe: ClickHouse at {} is not reachable: {err}",
                etl.url
            )
        })?;
    Ok((runtime, client))
}

/// Runs the avro-etl pipeline until `stop` is set.
pub fn run(settings: &PipelineSettings, etl: &EtlSettings, stop: &AtomicBool) -> Result<()> {
    if settings.delivery != settings::Delivery::AtLeastOnce {
        bail!(
            "rustpipe: avro-etl runs at-least-once only: a ClickHouse insert cannot join a Kafka transaction"
        );
    }
    let consumer_config = settings.consumer_config();
    println!(
        "{}",
        settings.effective_client_config(&consumer_config, &settings.producer_config())
    );
    let (runtime, client) = sink_runtime(etl)?;
    let consumer: BaseConsumer = consumer_config
        .create()
        .context("rustpipe: creating the consumer")?;
    consumer
        .subscribe(&[&settings.input_topic])
        .context("rustpipe: subscribing to the input")?;
    let log = File::create(&etl.insert_log)
        .with_context(|| format!("rustpipe: creating {}", etl.insert_log.display()))?;
    let (done, completions) = channel();
    let mut sink = Sink {
        settings,
        etl,
        consumer: &consumer,
        runtime: &runtime,
        client,
        sql: format!(
            "INSERT INTO {}.{} FORMAT {}",
            etl.database,
            etl.table,
            etl.format.clickhouse_name()
        ),
        done,
        completions,
        sent: VecDeque::new(),
        next_id: 0,
        pauses: 0,
        log: BufWriter::new(log),
    };
    let decoder = etl.decoder.map(Decoder::new).transpose()?;
    let mut block = OpenBlock::new(decoder.is_some(), etl.format);
    let mut ready = false;
    while !stop.load(Ordering::Relaxed) {
        sink.take_completions(false)?;
        let due = block.started.map(|started| started + etl.flush);
        if due.is_some_and(|due| Instant::now() >= due) {
            sink.send(&mut block)?;
            continue;
        }
        let wait = due.map_or(IDLE_POLL, |due| {
            due.saturating_duration_since(Instant::now()).min(IDLE_POLL)
        });
        match consumer.poll(wait) {
            Some(Ok(message)) => {
                block.add(&message, decoder.as_ref(), etl.events)?;
                if block.encoder.rows() >= etl.block_rows {
                    sink.send(&mut block)?;
                }
            }
            Some(Err(err)) if crate::pipeline::recoverable(&err) => {
                eprintln!("rustpipe: {err} (the client reconnects by itself)")
            }
            Some(Err(err)) => return Err(err).context("rustpipe: consuming"),
            None => {}
        }
        if !ready && !consumer.assignment()?.elements().is_empty() {
            println!("{READY_LINE}");
            ready = true;
        }
    }
    sink.send(&mut block)?;
    sink.finish()
}

/// The raw arm: the message as one row, its key (the message's sequence
/// number) and its bytes; returns its timestamp, gendata's slot to the
/// millisecond.
fn pass_through(
    message: &rdkafka::message::BorrowedMessage<'_>,
    datum: &[u8],
    encoder: &mut BlockEncoder,
) -> Result<i64> {
    let seq = message
        .key()
        .and_then(|key| <[u8; 8]>::try_from(key).ok())
        .map(u64::from_be_bytes)
        .ok_or_else(|| anyhow!("rustpipe: a message without its 8-byte sequence key"))?;
    encoder.push_raw(seq, datum);
    message
        .timestamp()
        .to_millis()
        .map(|ms| ms * 1000)
        .ok_or_else(|| anyhow!("rustpipe: a message without a timestamp"))
}

/// Decodes one datum into `encoder`'s block, keeping the rows the filter
/// keeps; returns the events' intended time (one per message).
fn decode_into(
    decoder: &Decoder,
    datum: &[u8],
    events: usize,
    encoder: &mut BlockEncoder,
) -> Result<i64> {
    let mut ts_us = 0;
    let decoded = decoder.decode(datum, |event| {
        ts_us = event.ts_us;
        if keeps(event) {
            encoder.push(event);
        }
    })?;
    if decoded != events {
        bail!("rustpipe: a datum held {decoded} events where BENCH_ETL_EVENTS says {events}");
    }
    Ok(ts_us)
}

/// The sink side: inserts in flight, their acknowledgements, the offsets
/// they release, and the insert log.
struct Sink<'a> {
    settings: &'a PipelineSettings,
    etl: &'a EtlSettings,
    consumer: &'a BaseConsumer,
    runtime: &'a tokio::runtime::Runtime,
    client: clickhouse::Client,
    sql: String,
    done: Sender<(Completion, Vec<(i64, u32)>)>,
    completions: Receiver<(Completion, Vec<(i64, u32)>)>,
    /// In send order.
    sent: VecDeque<SentBlock>,
    next_id: u64,
    pauses: u64,
    log: BufWriter<File>,
}

impl Sink<'_> {
    fn in_flight(&self) -> usize {
        self.sent.iter().filter(|b| !b.acked).count()
    }

    /// Sends the open block (if it has any message) as one insert, pausing
    /// the consumer first while every insert slot is busy.
    fn send(&mut self, block: &mut OpenBlock) -> Result<()> {
        if block.offsets.is_empty() {
            return Ok(());
        }
        if self.in_flight() >= self.etl.max_in_flight {
            self.pauses += 1;
            let assignment = self.consumer.assignment()?;
            self.consumer
                .pause(&assignment)
                .context("rustpipe: pausing the consumer")?;
            while self.in_flight() >= self.etl.max_in_flight {
                self.take_completions(true)?;
            }
            self.consumer
                .resume(&assignment)
                .context("rustpipe: resuming the consumer")?;
        }
        let id = self.next_id;
        self.next_id += 1;
        let body = block.encoder.finish(Vec::new());
        let stamps = std::mem::take(&mut block.stamps);
        self.sent.push_back(SentBlock {
            id,
            offsets: std::mem::take(&mut block.offsets),
            acked: false,
        });
        block.started = None;
        let (client, sql, done) = (self.client.clone(), self.sql.clone(), self.done.clone());
        self.runtime.spawn(async move {
            let started = Instant::now();
            let result = async {
                let mut insert = client.insert_formatted_with(sql);
                insert.send(body.into()).await?;
                insert.end().await
            }
            .await
            .map(|()| started.elapsed());
            let completion = Completion {
                id,
                result,
                ack_us: now_us(),
            };
            // The reader has gone only when it is failing anyway.
            let _ = done.send((completion, stamps));
        });
        Ok(())
    }

    /// Handles acknowledgements (waiting for one if `wait`): logs each,
    /// and stores the offsets of every block acknowledged in send order.
    fn take_completions(&mut self, wait: bool) -> Result<()> {
        let mut next = if wait {
            Some(self.completions.recv_timeout(STOP_TIMEOUT).map_err(|_| {
                anyhow!(
                    "rustpipe: no insert was acknowledged within {} s",
                    STOP_TIMEOUT.as_secs()
                )
            })?)
        } else {
            self.completions.try_recv().ok()
        };
        while let Some((completion, stamps)) = next {
            let flushed = completion.result.map_err(|err| {
                anyhow!(
                    "rustpipe: inserting into ClickHouse at {}: {err}",
                    self.etl.url
                )
            })?;
            self.log_ack(completion.ack_us, flushed, &stamps)?;
            if let Some(block) = self.sent.iter_mut().find(|b| b.id == completion.id) {
                block.acked = true;
            }
            next = self.completions.try_recv().ok();
        }
        self.store_settled()
    }

    fn log_ack(&mut self, ack_us: i64, flushed: Duration, stamps: &[(i64, u32)]) -> Result<()> {
        let mut latency = histogram::latency_us();
        let mut rows = 0u64;
        for &(ts_us, count) in stamps {
            latency.saturating_record_n((ack_us - ts_us).max(1) as u64, u64::from(count));
            rows += u64::from(count);
        }
        let latency = histogram::encode(&latency)
            .map_err(|err| anyhow!("rustpipe: serializing a histogram: {err:?}"))?;
        let ack = InsertAck {
            ack_us,
            flush_us: flushed.as_micros() as u64,
            rows,
            pauses: self.pauses,
            latency,
        };
        serde_json::to_writer(&mut self.log, &ack)?;
        self.log.write_all(b"\n")?;
        self.log.flush().context("rustpipe: writing the insert log")
    }

    /// Stores the offsets of the acknowledged blocks at the front of the
    /// send order, for the next auto-commit.
    fn store_settled(&mut self) -> Result<()> {
        let mut offsets = BTreeMap::new();
        while self.sent.front().is_some_and(|b| b.acked) {
            if let Some(block) = self.sent.pop_front() {
                offsets.extend(block.offsets);
            }
        }
        if offsets.is_empty() {
            return Ok(());
        }
        let mut list = TopicPartitionList::with_capacity(offsets.len());
        for (partition, next) in offsets {
            list.add_partition_offset(&self.settings.input_topic, partition, Offset::Offset(next))?;
        }
        self.consumer
            .store_offsets(&list)
            .context("rustpipe: storing offsets")
    }

    /// Waits for every insert, then stores and commits the last offsets.
    fn finish(mut self) -> Result<()> {
        while !self.sent.is_empty() {
            self.take_completions(true)?;
        }
        match self.consumer.commit_consumer_state(CommitMode::Sync) {
            Ok(()) | Err(KafkaError::ConsumerCommit(RDKafkaErrorCode::NoOffset)) => {}
            Err(err) => return Err(err).context("rustpipe: final commit"),
        }
        Ok(())
    }
}
