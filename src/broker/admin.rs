//! What a run asks of the broker: per-run topics, high watermarks and a
//! consumer group's committed offsets.

use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, ResourceSpecifier, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::{ClientConfig, RDKafkaLogLevel};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::{KafkaError, KafkaResult};
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::{Offset, TopicPartitionList};

use crate::interrupt::Interrupt;
use crate::model::broker::Replicas;

const CALL_TIMEOUT: Duration = Duration::from_secs(10);

fn quiet_config(bootstrap: &str) -> ClientConfig {
    let mut config = ClientConfig::new();
    config
        .set("bootstrap.servers", bootstrap)
        .set_log_level(RDKafkaLogLevel::Critical);
    config
}

/// Waits until a broker at `bootstrap` (any of its addresses) accepts
/// connections and serves metadata.
pub fn wait_until_reachable(
    bootstrap: &str,
    timeout: Duration,
    interrupt: &Interrupt,
) -> Result<()> {
    let deadline = Instant::now() + timeout;
    let mut addresses = Vec::new();
    for part in bootstrap.split(',') {
        let address = part
            .to_socket_addrs()
            .with_context(|| format!("`{part}` is not a host:port"))?
            .next()
            .ok_or_else(|| anyhow!("`{part}` resolves to no address"))?;
        addresses.push(address);
    }
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let connect = left.max(Duration::from_millis(50)) / addresses.len() as u32;
        if addresses
            .iter()
            .any(|address| TcpStream::connect_timeout(address, connect).is_ok())
        {
            let consumer: BaseConsumer = quiet_config(bootstrap).create()?;
            if let Ok(metadata) =
                consumer.fetch_metadata(None, left.max(Duration::from_millis(500)))
            {
                if !metadata.brokers().is_empty() {
                    return Ok(());
                }
            }
        }
        if Instant::now() >= deadline || interrupt.is_set() {
            bail!("no Kafka broker answers at {bootstrap}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The ids of the brokers the cluster at `bootstrap` lists as alive.
pub fn broker_ids(bootstrap: &str) -> Result<Vec<i32>> {
    let consumer: BaseConsumer = quiet_config(bootstrap).create()?;
    let metadata = consumer
        .fetch_metadata(None, CALL_TIMEOUT)
        .with_context(|| format!("reading the cluster's brokers at {bootstrap}"))?;
    Ok(metadata.brokers().iter().map(|b| b.id()).collect())
}

/// The broker's check for timed-out transactions, in ms
/// (transaction.abort.timed.out.transaction.cleanup.interval.ms), as the
/// lowest-numbered broker of the cluster at `bootstrap` runs it: after a
/// kill, a transaction no restarted process fences stays open until the
/// first check past its timeout. None when the broker does not give it or
/// cannot be asked: the record then says nothing rather than a guess.
pub fn abandoned_transaction_check_ms(bootstrap: &str) -> Option<u64> {
    const SETTING: &str = "transaction.abort.timed.out.transaction.cleanup.interval.ms";
    let id = broker_ids(bootstrap).ok()?.into_iter().min()?;
    let admin: AdminClient<DefaultClientContext> = quiet_config(bootstrap).create().ok()?;
    let options = AdminOptions::new().request_timeout(Some(CALL_TIMEOUT));
    let described = futures::executor::block_on(
        admin.describe_configs(&[ResourceSpecifier::Broker(id)], &options),
    )
    .ok()?;
    let resource = described.into_iter().next()?.ok()?;
    resource.get(SETTING)?.value.as_deref()?.parse().ok()
}

/// The broker that leads `partition` of `topic`, None while it has none.
pub fn partition_leader(bootstrap: &str, topic: &str, partition: i32) -> Result<Option<i32>> {
    let consumer: BaseConsumer = quiet_config(bootstrap).create()?;
    let metadata = consumer
        .fetch_metadata(Some(topic), CALL_TIMEOUT)
        .with_context(|| format!("reading the leader of {topic}"))?;
    let leader = metadata
        .topics()
        .first()
        .and_then(|t| t.partitions().iter().find(|p| p.id() == partition))
        .map(|p| p.leader());
    Ok(leader.filter(|&id| id >= 0))
}

/// A topic to create for a run.
#[derive(Debug, Clone)]
pub struct TopicRequest {
    pub name: String,
    pub partitions: i32,
    /// The topic's compression.type (`producer` keeps what producers send).
    pub compression: String,
}

/// Creates `topics` with `replicas`, failing if any already exists.
pub fn create_topics(bootstrap: &str, replicas: Replicas, topics: &[TopicRequest]) -> Result<()> {
    let admin: AdminClient<DefaultClientContext> = quiet_config(bootstrap).create()?;
    let min_isr = replicas.min_insync_replicas.to_string();
    let new: Vec<NewTopic<'_>> = topics
        .iter()
        .map(|t| {
            NewTopic::new(
                &t.name,
                t.partitions,
                TopicReplication::Fixed(replicas.replication as i32),
            )
            .set("compression.type", &t.compression)
            .set("min.insync.replicas", &min_isr)
        })
        .collect();
    let options = AdminOptions::new().operation_timeout(Some(CALL_TIMEOUT));
    let results = futures::executor::block_on(admin.create_topics(&new, &options))
        .context("creating the run's topics")?;
    for result in results {
        if let Err((topic, code)) = result {
            bail!("creating topic {topic}: {code}");
        }
    }
    // Wait until every topic's partitions have leaders and every replica in
    // sync, so the first produce and the first fetch do not race the creation.
    let consumer: BaseConsumer = quiet_config(bootstrap).create()?;
    let deadline = Instant::now() + CALL_TIMEOUT;
    for topic in topics {
        loop {
            let ready = consumer
                .fetch_metadata(Some(&topic.name), CALL_TIMEOUT)
                .ok()
                .and_then(|m| {
                    let t = m.topics().first()?;
                    Some(
                        t.error().is_none()
                            && t.partitions().len() == topic.partitions as usize
                            && t.partitions().iter().all(|p| {
                                p.leader() >= 0 && p.isr().len() == replicas.replication as usize
                            }),
                    )
                })
                .unwrap_or(false);
            if ready {
                break;
            }
            if Instant::now() > deadline {
                bail!("topic {} has no leader after creation", topic.name);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    Ok(())
}

/// Deletes `topics`; topics that do not exist are not an error.
fn delete_topics(bootstrap: &str, topics: &[&str]) -> Result<()> {
    let admin: AdminClient<DefaultClientContext> = quiet_config(bootstrap).create()?;
    let options = AdminOptions::new().operation_timeout(Some(CALL_TIMEOUT));
    let results = futures::executor::block_on(admin.delete_topics(topics, &options))
        .context("deleting the run's topics")?;
    for result in results {
        match result {
            Ok(_) | Err((_, rdkafka::types::RDKafkaErrorCode::UnknownTopicOrPartition)) => {}
            Err((topic, code)) => bail!("deleting topic {topic}: {code}"),
        }
    }
    Ok(())
}

/// Deletes every topic whose name holds `run_key`: the run's own topics and
/// those its product made (changelog and repartition topics carry the group
/// id, which is the run key, in their names).
pub fn delete_run_topics(bootstrap: &str, run_key: &str) -> Result<()> {
    let consumer: BaseConsumer = quiet_config(bootstrap).create()?;
    let metadata = consumer
        .fetch_metadata(None, CALL_TIMEOUT)
        .context("listing the run's topics")?;
    let topics: Vec<&str> = metadata
        .topics()
        .iter()
        .map(|t| t.name())
        .filter(|name| name.contains(run_key))
        .collect();
    if topics.is_empty() {
        return Ok(());
    }
    delete_topics(bootstrap, &topics)
}

/// Assigns `consumer` every partition of `topics`, each from `offset`;
/// returns how many partitions that is.
pub fn assign_all(consumer: &BaseConsumer, topics: &[&str], offset: Offset) -> Result<usize> {
    let mut assignment = TopicPartitionList::new();
    for topic in topics {
        let metadata = consumer
            .fetch_metadata(Some(topic), CALL_TIMEOUT)
            .with_context(|| format!("reading the metadata of {topic}"))?;
        let partitions = metadata
            .topics()
            .first()
            .map_or(0, |t| t.partitions().len());
        if partitions == 0 {
            bail!("topic {topic} has no partitions");
        }
        for partition in 0..partitions as i32 {
            assignment.add_partition_offset(topic, partition, offset)?;
        }
    }
    consumer.assign(&assignment)?;
    Ok(assignment.count())
}

/// Reads high watermarks and one consumer group's committed offsets.
pub struct OffsetReader {
    /// read_committed: a high watermark is then the last stable offset.
    consumer: BaseConsumer,
    /// read_uncommitted, for committed offsets only: librdkafka asks for
    /// stable offsets under read_committed, and while an exactly-once
    /// product's offsets wait in an open transaction the broker refuses and
    /// the client retries 100 ms later, so a line committing every 10 ms
    /// held samples up for hundreds of milliseconds. Without the request,
    /// the broker answers at once with the offsets committed so far;
    /// pending ones are never among them.
    committed_reader: BaseConsumer,
}

/// A partition's low and high watermarks, asked again while its leader
/// moves: a node killed in a cluster leaves its partitions' old leader in
/// the client's metadata until it refreshes, and the first answers are
/// "not leader", "leader not available", or from a new leader "high
/// watermark not caught up".
fn watermarks(consumer: &BaseConsumer, topic: &str, partition: i32) -> KafkaResult<(i64, i64)> {
    let deadline = Instant::now() + CALL_TIMEOUT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match consumer.fetch_watermarks(topic, partition, left) {
            Err(err) if leader_moving(&err) && Instant::now() + LEADER_RETRY < deadline => {
                std::thread::sleep(LEADER_RETRY);
            }
            result => return result,
        }
    }
}

/// Pause before asking again while a partition's leader moves.
const LEADER_RETRY: Duration = Duration::from_millis(100);

/// Whether `err` says the partition's leader is moving, which a later
/// request outlives.
fn leader_moving(err: &KafkaError) -> bool {
    matches!(
        err.rdkafka_error_code(),
        Some(
            RDKafkaErrorCode::NotLeaderForPartition
                | RDKafkaErrorCode::LeaderNotAvailable
                | RDKafkaErrorCode::OffsetNotAvailable
                | RDKafkaErrorCode::BrokerTransportFailure
        )
    )
}

impl OffsetReader {
    /// A reader for `group`; it never joins the group, it only asks.
    pub fn for_group(bootstrap: &str, group: &str) -> Result<OffsetReader> {
        let reader = |isolation: &str| -> Result<BaseConsumer> {
            quiet_config(bootstrap)
                .set("group.id", group)
                .set("enable.auto.commit", "false")
                .set("isolation.level", isolation)
                .create()
                .context("creating the offset reader")
        };
        Ok(OffsetReader {
            consumer: reader("read_committed")?,
            committed_reader: reader("read_uncommitted")?,
        })
    }

    /// Partitions of `topic`.
    fn partitions(&self, topic: &str) -> Result<Vec<i32>> {
        let metadata = self.consumer.fetch_metadata(Some(topic), CALL_TIMEOUT)?;
        let partitions = metadata
            .topics()
            .first()
            .map(|t| t.partitions().iter().map(|p| p.id()).collect())
            .unwrap_or_default();
        Ok(partitions)
    }

    /// The sum of `topic`'s high watermarks: records written so far.
    pub fn high_watermark(&self, topic: &str) -> Result<i64> {
        let mut sum = 0;
        for partition in self.partitions(topic)? {
            let (_, high) = watermarks(&self.consumer, topic, partition)
                .with_context(|| format!("reading the high watermark of {topic}"))?;
            sum += high;
        }
        Ok(sum)
    }

    /// The sum of the high watermarks of the run's other topics: those whose
    /// name holds `run_key` (the run's group id, which products put in the
    /// names of their changelog and repartition topics), but not `except`.
    /// Other runs' and other clients' topics on a shared broker stay out.
    pub fn run_topics_high_watermark(&self, run_key: &str, except: &[&str]) -> Result<i64> {
        let metadata = self.consumer.fetch_metadata(None, CALL_TIMEOUT)?;
        let mut sum = 0;
        for topic in metadata.topics() {
            let name = topic.name();
            if !name.contains(run_key) || except.contains(&name) {
                continue;
            }
            for partition in topic.partitions() {
                let (_, high) = watermarks(&self.consumer, name, partition.id())
                    .with_context(|| format!("reading the high watermark of {name}"))?;
                sum += high;
            }
        }
        Ok(sum)
    }

    /// The sum of the group's committed offsets on `topic` (0 where none).
    pub fn committed(&self, topic: &str) -> Result<i64> {
        Ok(self.committed_by_partition(topic)?.iter().sum::<u64>() as i64)
    }

    /// The group's committed offset on each partition of `topic`, in
    /// partition order; 0 where it has committed none.
    pub fn committed_by_partition(&self, topic: &str) -> Result<Vec<u64>> {
        let mut partitions = self.partitions(topic)?;
        partitions.sort_unstable();
        let mut request = TopicPartitionList::new();
        for &partition in &partitions {
            request.add_partition(topic, partition);
        }
        let committed = self
            .committed_reader
            .committed_offsets(request, CALL_TIMEOUT)
            .with_context(|| format!("reading committed offsets on {topic}"))?;
        Ok(partitions
            .iter()
            .map(
                |&p| match committed.find_partition(topic, p).map(|e| e.offset()) {
                    Some(Offset::Offset(o)) => o.max(0) as u64,
                    _ => 0,
                },
            )
            .collect())
    }
}

/// A consumer error the client recovers from by itself: librdkafka reports
/// its broker connections going down (a broker restart) as errors that need
/// no action, and fatal ones apart.
pub fn recoverable(err: &KafkaError) -> bool {
    matches!(err, KafkaError::MessageConsumption(_))
}
