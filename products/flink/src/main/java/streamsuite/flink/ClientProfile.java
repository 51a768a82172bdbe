package streamsuite.flink;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.AbstractConfig;

/**
 * The suite's Kafka client profile (BENCH_FETCH_MIN_BYTES ... BENCH_COMPRESSION),
 * applied to every consumer and producer under the Java client's own names:
 * fetch.min.bytes, fetch.max.wait.ms, max.partition.fetch.bytes, linger.ms,
 * acks, enable.idempotence, compression.type; and, under exactly-once only,
 * the transactional sink producer's retry backoff
 * (BENCH_TRANSACTION_RETRY_BACKOFF_MS as retry.backoff.ms and
 * retry.backoff.max.ms; -1 at-least-once, where it is neither read nor
 * applied). No static membership: the KafkaSource assigns its partitions
 * itself and joins no group, so BENCH_SESSION_TIMEOUT_MS and
 * BENCH_GROUP_INSTANCE_ID do not apply.
 */
record ClientProfile(
        int fetchMinBytes,
        int fetchMaxWaitMs,
        int maxPartitionFetchBytes,
        long lingerMs,
        String acks,
        boolean enableIdempotence,
        String compression,
        long transactionRetryBackoffMs) {

    /** The line every run's standard output carries once, before the readiness line. */
    static final String EFFECTIVE_PREFIX = "effective client config: ";
    private static final Set<String> ACKS = Set.of("all", "1", "0");
    private static final Set<String> COMPRESSION = Set.of("none", "gzip", "snappy", "lz4", "zstd");

    static ClientProfile fromEnv(String product, boolean exactlyOnce) {
        return new ClientProfile(
                intAtLeast(product, "BENCH_FETCH_MIN_BYTES", 1),
                intAtLeast(product, "BENCH_FETCH_MAX_WAIT_MS", 0),
                intAtLeast(product, "BENCH_MAX_PARTITION_FETCH_BYTES", 1),
                intAtLeast(product, "BENCH_LINGER_MS", 0),
                oneOf(product, "BENCH_ACKS", ACKS),
                Boolean.parseBoolean(oneOf(product, "BENCH_ENABLE_IDEMPOTENCE", Set.of("true", "false"))),
                oneOf(product, "BENCH_COMPRESSION", COMPRESSION),
                exactlyOnce ? intAtLeast(product, "BENCH_TRANSACTION_RETRY_BACKOFF_MS", 0) : -1);
    }

    /**
     * The profile as the clients took it: read back from the parsed consumer
     * and producer configurations (the objects KafkaConsumer and KafkaProducer
     * are built from), plus the commit interval; the transactional producer's
     * retry backoff only under exactly-once; the engine settings applied
     * under "engine".
     */
    static String effectiveJson(ConsumerConfig consumer, ProducerConfig producer, long commitIntervalMs,
            boolean exactlyOnce, Map<String, Object> engine) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("fetch_min_bytes", number(consumer, ConsumerConfig.FETCH_MIN_BYTES_CONFIG));
        json.put("fetch_max_wait_ms", number(consumer, ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG));
        json.put("max_partition_fetch_bytes", number(consumer, ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG));
        json.put("linger_ms", number(producer, ProducerConfig.LINGER_MS_CONFIG));
        String acks = String.valueOf(producer.values().get(ProducerConfig.ACKS_CONFIG));
        json.put("acks", acks.equals("-1") ? "all" : acks);
        json.put("enable_idempotence", producer.getBoolean(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG));
        json.put("compression", producer.getString(ProducerConfig.COMPRESSION_TYPE_CONFIG));
        if (exactlyOnce) {
            long backoff = producer.getLong(ProducerConfig.RETRY_BACKOFF_MS_CONFIG);
            long backoffMax = producer.getLong(ProducerConfig.RETRY_BACKOFF_MAX_MS_CONFIG);
            if (backoff != backoffMax) {
                throw new IllegalStateException("flink: the sink producer's retry.backoff.ms " + backoff
                        + " and retry.backoff.max.ms " + backoffMax + " differ");
            }
            json.put("transaction_retry_backoff_ms", backoff);
        }
        json.put("commit_interval_ms", commitIntervalMs);
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

    private static int intAtLeast(String product, String name, int min) {
        String value = Settings.require(product, name);
        try {
            int parsed = Integer.parseInt(value.trim());
            if (parsed >= min) {
                return parsed;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(
                product + ": " + name + " `" + value + "` is not an integer >= " + min);
    }

    private static String oneOf(String product, String name, Set<String> allowed) {
        String value = Settings.require(product, name).trim();
        if (!allowed.contains(value)) {
            throw new IllegalArgumentException(
                    product + ": " + name + " `" + value + "` is not one of " + String.join(", ", allowed.stream().sorted().toList()));
        }
        return value;
    }
}
