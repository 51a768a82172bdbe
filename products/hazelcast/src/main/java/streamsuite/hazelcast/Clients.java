package streamsuite.hazelcast;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import streamsuite.common.ClientProfile;
import streamsuite.common.Settings;

/**
 * The Kafka client properties of the job's source and sink, made from the
 * run's settings: the suite's client profile under the Java client's own names
 * (fetch.min.bytes, fetch.max.wait.ms, max.partition.fetch.bytes, linger.ms,
 * acks, enable.idempotence, compression.type), and the effective client config
 * read back from them.
 */
final class Clients {
    /**
     * The transactional producers' transaction.timeout.ms: far above a snapshot
     * interval and an in-process job restart, and it bounds how long a
     * transaction left open by a killed process holds back read_committed
     * readers (its id, named after the job's id, is never reused to abort it).
     */
    static final String TRANSACTION_TIMEOUT_MS = "30000";
    /**
     * The least interval at which the source's consumer reports its polled
     * positions to the run's group (Kafka's auto-commit). Those commits only
     * let the suite read the job's progress; Jet never reads them back, so
     * they follow the snapshot interval only down to this floor rather than
     * adding 100 commits a second at a 10 ms snapshot interval.
     */
    static final long MIN_OBSERVATION_COMMIT_INTERVAL_MS = 100;

    private Clients() {}

    /**
     * How often the source's consumer commits its polled positions to the
     * run's group: the snapshot interval, but no less than
     * {@link #MIN_OBSERVATION_COMMIT_INTERVAL_MS}.
     */
    static long observationCommitIntervalMs(Settings settings) {
        return Math.max(MIN_OBSERVATION_COMMIT_INTERVAL_MS, settings.commitIntervalMs());
    }

    /**
     * The source's consumer properties. The source assigns its partitions
     * itself (no group membership, so no session to time out and no static
     * member id) and keeps its offsets in the job's snapshots; group.id with
     * the client's auto-commit (every {@link #observationCommitIntervalMs})
     * reports the positions the source has polled to the run's group, which
     * is where the suite reads the product's progress. Jet never reads them
     * back.
     */
    static Properties consumer(Settings settings) {
        ClientProfile client = settings.client();
        Properties p = new Properties();
        p.setProperty(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrap());
        p.setProperty(ConsumerConfig.CLIENT_ID_CONFIG, settings.groupId() + "-source");
        p.setProperty(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.setProperty(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.setProperty(ConsumerConfig.GROUP_ID_CONFIG, settings.groupId());
        p.setProperty(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "true");
        p.setProperty(ConsumerConfig.AUTO_COMMIT_INTERVAL_MS_CONFIG, Long.toString(observationCommitIntervalMs(settings)));
        p.setProperty(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.setProperty(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.setProperty(ConsumerConfig.FETCH_MIN_BYTES_CONFIG, Integer.toString(client.fetchMinBytes()));
        p.setProperty(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, Integer.toString(client.fetchMaxWaitMs()));
        p.setProperty(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, Integer.toString(client.maxPartitionFetchBytes()));
        return p;
    }

    /**
     * The sink's producer properties. Jet sets transactional.id itself (and
     * refuses one given here); its transactional producers are idempotent, so
     * exactly-once turns idempotence on whatever the profile says, and get
     * BENCH_TRANSACTION_RETRY_BACKOFF_MS as both retry.backoff.ms and
     * retry.backoff.max.ms (a constant backoff).
     */
    static Properties producer(Settings settings) {
        ClientProfile client = settings.client();
        Properties p = new Properties();
        p.setProperty(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrap());
        p.setProperty(ProducerConfig.CLIENT_ID_CONFIG, settings.groupId() + "-sink");
        p.setProperty(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.setProperty(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.setProperty(ProducerConfig.LINGER_MS_CONFIG, Long.toString(client.lingerMs()));
        p.setProperty(ProducerConfig.ACKS_CONFIG, client.acks());
        p.setProperty(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
                Boolean.toString(client.enableIdempotence() || settings.exactlyOnce()));
        p.setProperty(ProducerConfig.COMPRESSION_TYPE_CONFIG, client.compression());
        if (settings.exactlyOnce()) {
            p.setProperty(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, TRANSACTION_TIMEOUT_MS);
            p.setProperty(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, Long.toString(client.transactionRetryBackoffMs()));
            p.setProperty(ProducerConfig.RETRY_BACKOFF_MAX_MS_CONFIG, Long.toString(client.transactionRetryBackoffMs()));
        }
        return p;
    }

    /**
     * The client profile as the clients take it: the source's and the sink's
     * Properties parsed and checked as KafkaConsumer and KafkaProducer do (so a
     * combination the client refuses, acks 1 or 0 with idempotence, fails here
     * with the client's message), plus the snapshot interval; under
     * exactly-once the transactional producers' retry backoff; and, under
     * "engine", how often the source commits its positions for the suite to
     * read and the non-cooperative threads' idle cap.
     *
     * @throws org.apache.kafka.common.config.ConfigException when the client refuses the profile
     */
    static String effectiveJson(Settings settings, long snapshotIntervalMs, long noncooperativeMaxIdleUs) {
        ConsumerConfig consumer = new ConsumerConfig(consumer(settings));
        Properties producer = producer(settings);
        if (settings.exactlyOnce()) {
            // The sink's producers each get a transactional.id from Jet.
            producer.setProperty(ProducerConfig.TRANSACTIONAL_ID_CONFIG, settings.transactionalId() + "-check");
        }
        Map<String, Object> engine = new LinkedHashMap<>();
        engine.put("observation_commit_interval_ms",
                ((Number) consumer.values().get(ConsumerConfig.AUTO_COMMIT_INTERVAL_MS_CONFIG)).longValue());
        engine.put("idle_noncooperative_max_us", noncooperativeMaxIdleUs);
        return ClientProfile.effectiveJson(HazelcastApp.PRODUCT, consumer, new ProducerConfig(producer),
                snapshotIntervalMs, settings.exactlyOnce(), engine);
    }
}
