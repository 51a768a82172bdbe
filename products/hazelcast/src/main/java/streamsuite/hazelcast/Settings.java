package streamsuite.hazelcast;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The run's settings, read from the BENCH_* variables the suite sets, and the
 * Kafka client properties made from them: the suite's client profile under the
 * Java client's own names (fetch.min.bytes, fetch.max.wait.ms,
 * max.partition.fetch.bytes, linger.ms, acks, enable.idempotence,
 * compression.type).
 */
record Settings(
        String bootstrap,
        String inputTopic,
        String outputTopic,
        String groupId,
        String transactionalId,
        boolean exactlyOnce,
        long commitIntervalMs,
        int parallelism,
        int fetchMinBytes,
        int fetchMaxWaitMs,
        int maxPartitionFetchBytes,
        long lingerMs,
        String acks,
        boolean enableIdempotence,
        String compression,
        long transactionRetryBackoffMs) {

    static final String PRODUCT = "hazelcast";
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
    private static final Set<String> ACKS = Set.of("all", "1", "0");
    private static final Set<String> COMPRESSION = Set.of("none", "gzip", "snappy", "lz4", "zstd");

    static Settings fromEnv() {
        // First: a workload this product does not run is the one line to report.
        String workload = require("BENCH_WORKLOAD");
        if (!workload.equals("stateless")) {
            throw new IllegalArgumentException(PRODUCT + ": workload `" + workload + "` is not implemented");
        }
        String delivery = require("BENCH_DELIVERY");
        boolean exactlyOnce = switch (delivery) {
            case "exactly-once" -> true;
            case "at-least-once" -> false;
            default -> throw new IllegalArgumentException(
                    PRODUCT + ": BENCH_DELIVERY `" + delivery + "` is not at-least-once or exactly-once");
        };
        return new Settings(
                require("BENCH_BOOTSTRAP"),
                require("BENCH_INPUT_TOPIC"),
                require("BENCH_OUTPUT_TOPIC"),
                require("BENCH_GROUP_ID"),
                require("BENCH_TRANSACTIONAL_ID"),
                exactlyOnce,
                intAtLeast("BENCH_COMMIT_INTERVAL_MS", 1),
                intAtLeast("BENCH_PARALLELISM", 1),
                intAtLeast("BENCH_FETCH_MIN_BYTES", 1),
                intAtLeast("BENCH_FETCH_MAX_WAIT_MS", 0),
                intAtLeast("BENCH_MAX_PARTITION_FETCH_BYTES", 1),
                intAtLeast("BENCH_LINGER_MS", 0),
                oneOf("BENCH_ACKS", ACKS),
                Boolean.parseBoolean(oneOf("BENCH_ENABLE_IDEMPOTENCE", Set.of("true", "false"))),
                oneOf("BENCH_COMPRESSION", COMPRESSION),
                // The suite's rule for every exactly-once line; at-least-once
                // neither reads nor applies it.
                exactlyOnce ? intAtLeast("BENCH_TRANSACTION_RETRY_BACKOFF_MS", 0) : -1);
    }

    /**
     * How often the source's consumer commits its polled positions to the
     * run's group: the snapshot interval, but no less than
     * {@link #MIN_OBSERVATION_COMMIT_INTERVAL_MS}.
     */
    long observationCommitIntervalMs() {
        return Math.max(MIN_OBSERVATION_COMMIT_INTERVAL_MS, commitIntervalMs);
    }

    /**
     * The source's consumer properties. The source assigns its partitions
     * itself (no group membership, so no session to time out and no static
     * member id) and keeps its offsets in the job's snapshots; group.id with
     * the client's auto-commit (every {@link #observationCommitIntervalMs()})
     * reports the positions the source has polled to the run's group, which
     * is where the suite reads the product's progress. Jet never reads them
     * back.
     */
    Properties consumer() {
        Properties p = new Properties();
        p.setProperty(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.setProperty(ConsumerConfig.CLIENT_ID_CONFIG, groupId + "-source");
        p.setProperty(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.setProperty(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.setProperty(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        p.setProperty(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "true");
        p.setProperty(ConsumerConfig.AUTO_COMMIT_INTERVAL_MS_CONFIG, Long.toString(observationCommitIntervalMs()));
        p.setProperty(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.setProperty(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.setProperty(ConsumerConfig.FETCH_MIN_BYTES_CONFIG, Integer.toString(fetchMinBytes));
        p.setProperty(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, Integer.toString(fetchMaxWaitMs));
        p.setProperty(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, Integer.toString(maxPartitionFetchBytes));
        return p;
    }

    /**
     * The sink's producer properties. Jet sets transactional.id itself (and
     * refuses one given here); its transactional producers are idempotent, so
     * exactly-once turns idempotence on whatever the profile says, and get
     * BENCH_TRANSACTION_RETRY_BACKOFF_MS as both retry.backoff.ms and
     * retry.backoff.max.ms (a constant backoff).
     */
    Properties producer() {
        Properties p = new Properties();
        p.setProperty(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.setProperty(ProducerConfig.CLIENT_ID_CONFIG, groupId + "-sink");
        p.setProperty(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.setProperty(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.setProperty(ProducerConfig.LINGER_MS_CONFIG, Long.toString(lingerMs));
        p.setProperty(ProducerConfig.ACKS_CONFIG, acks);
        p.setProperty(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, Boolean.toString(enableIdempotence || exactlyOnce));
        p.setProperty(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression);
        if (exactlyOnce) {
            p.setProperty(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, TRANSACTION_TIMEOUT_MS);
            p.setProperty(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, Long.toString(transactionRetryBackoffMs));
            p.setProperty(ProducerConfig.RETRY_BACKOFF_MAX_MS_CONFIG, Long.toString(transactionRetryBackoffMs));
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
    String effectiveJson(long snapshotIntervalMs, long noncooperativeMaxIdleUs) {
        ConsumerConfig consumer = new ConsumerConfig(consumer());
        Properties producerProps = producer();
        if (exactlyOnce) {
            // The sink's producers each get a transactional.id from Jet.
            producerProps.setProperty(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId + "-check");
        }
        ProducerConfig producer = new ProducerConfig(producerProps);
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("fetch_min_bytes", number(consumer, ConsumerConfig.FETCH_MIN_BYTES_CONFIG));
        json.put("fetch_max_wait_ms", number(consumer, ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG));
        json.put("max_partition_fetch_bytes", number(consumer, ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG));
        json.put("linger_ms", number(producer, ProducerConfig.LINGER_MS_CONFIG));
        String acksValue = String.valueOf(producer.values().get(ProducerConfig.ACKS_CONFIG));
        json.put("acks", acksValue.equals("-1") ? "all" : acksValue);
        json.put("enable_idempotence", producer.getBoolean(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG));
        json.put("compression", producer.getString(ProducerConfig.COMPRESSION_TYPE_CONFIG));
        if (exactlyOnce) {
            long backoff = producer.getLong(ProducerConfig.RETRY_BACKOFF_MS_CONFIG);
            long backoffMax = producer.getLong(ProducerConfig.RETRY_BACKOFF_MAX_MS_CONFIG);
            if (backoff != backoffMax) {
                throw new IllegalStateException(PRODUCT + ": the sink producer's retry.backoff.ms " + backoff
                        + " and retry.backoff.max.ms " + backoffMax + " differ");
            }
            json.put("transaction_retry_backoff_ms", backoff);
        }
        json.put("commit_interval_ms", snapshotIntervalMs);
        Map<String, Object> engine = new LinkedHashMap<>();
        engine.put("observation_commit_interval_ms", number(consumer, ConsumerConfig.AUTO_COMMIT_INTERVAL_MS_CONFIG));
        engine.put("idle_noncooperative_max_us", noncooperativeMaxIdleUs);
        json.put("engine", engine);
        try {
            return new ObjectMapper().writeValueAsString(json);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static long number(AbstractConfig config, String key) {
        return ((Number) config.values().get(key)).longValue();
    }

    private static String require(String name) {
        String value = System.getenv(name);
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(PRODUCT + ": " + name + " is not set (the suite sets it)");
        }
        return value.trim();
    }

    private static int intAtLeast(String name, int min) {
        String value = require(name);
        try {
            int parsed = Integer.parseInt(value);
            if (parsed >= min) {
                return parsed;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(PRODUCT + ": " + name + " `" + value + "` is not an integer >= " + min);
    }

    private static String oneOf(String name, Set<String> allowed) {
        String value = require(name);
        if (!allowed.contains(value)) {
            throw new IllegalArgumentException(PRODUCT + ": " + name + " `" + value + "` is not one of "
                    + String.join(", ", allowed.stream().sorted().toList()));
        }
        return value;
    }
}
