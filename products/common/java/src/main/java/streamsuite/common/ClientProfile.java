package streamsuite.common;

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
 * which every app applies to its consumers and producers under the Java
 * client's own names: fetch.min.bytes, fetch.max.wait.ms,
 * max.partition.fetch.bytes, linger.ms, acks, enable.idempotence,
 * compression.type; and, under exactly-once only, the transactional producer's
 * retry backoff (BENCH_TRANSACTION_RETRY_BACKOFF_MS as retry.backoff.ms and
 * retry.backoff.max.ms) and transaction timeout (BENCH_TRANSACTION_TIMEOUT_MS
 * as transaction.timeout.ms); both -1 at-least-once, where they are neither
 * read nor applied. Static membership, for an app whose consumer joins its group, is
 * {@link StaticMembership}.
 */
public record ClientProfile(
        int fetchMinBytes,
        int fetchMaxWaitMs,
        int maxPartitionFetchBytes,
        long lingerMs,
        String acks,
        boolean enableIdempotence,
        String compression,
        long transactionRetryBackoffMs,
        long transactionTimeoutMs) {

    /** The line every run's standard output carries once, before the readiness line. */
    public static final String EFFECTIVE_PREFIX = "effective client config: ";
    private static final Set<String> ACKS = Set.of("all", "1", "0");
    private static final Set<String> COMPRESSION = Set.of("none", "gzip", "snappy", "lz4", "zstd");

    /** The profile in {@code env}; the retry backoff and timeout only under exactly-once. */
    public static ClientProfile from(BenchEnv env, boolean exactlyOnce) {
        return new ClientProfile(
                env.intAtLeast("BENCH_FETCH_MIN_BYTES", 1),
                env.intAtLeast("BENCH_FETCH_MAX_WAIT_MS", 0),
                env.intAtLeast("BENCH_MAX_PARTITION_FETCH_BYTES", 1),
                env.intAtLeast("BENCH_LINGER_MS", 0),
                env.oneOf("BENCH_ACKS", ACKS),
                Boolean.parseBoolean(env.oneOf("BENCH_ENABLE_IDEMPOTENCE", Set.of("true", "false"))),
                env.oneOf("BENCH_COMPRESSION", COMPRESSION),
                exactlyOnce ? env.intAtLeast("BENCH_TRANSACTION_RETRY_BACKOFF_MS", 0) : -1,
                exactlyOnce ? env.intAtLeast("BENCH_TRANSACTION_TIMEOUT_MS", 1) : -1);
    }

    /**
     * The profile as the clients took it, as JSON for the line after
     * {@link #EFFECTIVE_PREFIX}: read back from the parsed consumer and
     * producer configurations (the objects KafkaConsumer and KafkaProducer are
     * built from), so what is reported is what applies. Then
     * session_timeout_ms when the consumer joins its group as a static member
     * (group.instance.id set; a consumer that assigns its partitions itself
     * has no session); the transactional producer's retry backoff and
     * transaction timeout only under exactly-once (the timeout as the producer
     * has it, also where the engine keeps a longer one than the profile's); the commit interval as the app applies it; and the engine
     * settings the app applied, under "engine", with the {@link KnownCost}
     * this process burns.
     *
     * @throws IllegalStateException when the producer's retry.backoff.ms and
     *     retry.backoff.max.ms differ under exactly-once (the suite's rule is
     *     one constant backoff)
     */
    public static String effectiveJson(String product, ConsumerConfig consumer, ProducerConfig producer,
            long commitIntervalMs, boolean exactlyOnce, Map<String, Object> engine) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("fetch_min_bytes", number(consumer, ConsumerConfig.FETCH_MIN_BYTES_CONFIG));
        json.put("fetch_max_wait_ms", number(consumer, ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG));
        json.put("max_partition_fetch_bytes", number(consumer, ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG));
        json.put("linger_ms", number(producer, ProducerConfig.LINGER_MS_CONFIG));
        String acks = String.valueOf(producer.values().get(ProducerConfig.ACKS_CONFIG));
        json.put("acks", acks.equals("-1") ? "all" : acks);
        json.put("enable_idempotence", producer.getBoolean(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG));
        json.put("compression", producer.getString(ProducerConfig.COMPRESSION_TYPE_CONFIG));
        if (consumer.values().get(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG) != null) {
            json.put("session_timeout_ms", number(consumer, ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG));
        }
        if (exactlyOnce) {
            long backoff = producer.getLong(ProducerConfig.RETRY_BACKOFF_MS_CONFIG);
            long backoffMax = producer.getLong(ProducerConfig.RETRY_BACKOFF_MAX_MS_CONFIG);
            if (backoff != backoffMax) {
                throw new IllegalStateException(product + ": the producer's retry.backoff.ms " + backoff
                        + " and retry.backoff.max.ms " + backoffMax + " differ");
            }
            json.put("transaction_retry_backoff_ms", backoff);
            json.put("transaction_timeout_ms", number(producer, ProducerConfig.TRANSACTION_TIMEOUT_CONFIG));
        }
        json.put("commit_interval_ms", commitIntervalMs);
        Map<String, Object> applied = new LinkedHashMap<>(engine);
        applied.put(KnownCost.KEY, KnownCost.NS_PER_RECORD);
        json.put("engine", applied);
        try {
            return new ObjectMapper().writeValueAsString(json);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static long number(AbstractConfig config, String key) {
        return ((Number) config.values().get(key)).longValue();
    }
}
