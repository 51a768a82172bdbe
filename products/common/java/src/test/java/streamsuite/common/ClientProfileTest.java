package streamsuite.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/** The client profile read from BENCH_* values, and the effective config line made from the clients' configs. */
class ClientProfileTest {
    /** The profile's variables as the suite sets them (bench.yaml's client section). */
    static Map<String, String> profile() {
        Map<String, String> env = new HashMap<>();
        env.put("BENCH_FETCH_MIN_BYTES", "1");
        env.put("BENCH_FETCH_MAX_WAIT_MS", "10");
        env.put("BENCH_MAX_PARTITION_FETCH_BYTES", "52428800");
        env.put("BENCH_LINGER_MS", "1");
        env.put("BENCH_ACKS", "all");
        env.put("BENCH_ENABLE_IDEMPOTENCE", "true");
        env.put("BENCH_COMPRESSION", "lz4");
        env.put("BENCH_TRANSACTION_RETRY_BACKOFF_MS", "20");
        env.put("BENCH_TRANSACTION_TIMEOUT_MS", "9000");
        env.put("BENCH_GROUP_INSTANCE_ID", "g-member");
        env.put("BENCH_SESSION_TIMEOUT_MS", "6000");
        return env;
    }

    private static String error(Map<String, String> env) {
        return assertThrows(IllegalArgumentException.class,
                () -> ClientProfile.from(new BenchEnv("p", env), true)).getMessage();
    }

    @Test
    void the_profile_is_read_from_its_variables() {
        Map<String, String> env = profile();
        env.put("BENCH_LINGER_MS", " 5 ");
        env.put("BENCH_ACKS", "1 ");
        env.put("BENCH_ENABLE_IDEMPOTENCE", "false");
        assertEquals(new ClientProfile(1, 10, 52428800, 5, "1", false, "lz4", 20, 9000),
                ClientProfile.from(new BenchEnv("p", env), true));
    }

    @Test
    void at_least_once_neither_reads_nor_applies_the_retry_backoff_or_the_transaction_timeout() {
        Map<String, String> env = profile();
        env.remove("BENCH_TRANSACTION_RETRY_BACKOFF_MS");
        env.remove("BENCH_TRANSACTION_TIMEOUT_MS");
        ClientProfile atLeastOnce = ClientProfile.from(new BenchEnv("p", env), false);
        assertEquals(-1, atLeastOnce.transactionRetryBackoffMs());
        assertEquals(-1, atLeastOnce.transactionTimeoutMs());
        assertEquals("p: BENCH_TRANSACTION_RETRY_BACKOFF_MS is not set (the suite sets it)", error(env));
        env.put("BENCH_TRANSACTION_RETRY_BACKOFF_MS", "20");
        assertEquals("p: BENCH_TRANSACTION_TIMEOUT_MS is not set (the suite sets it)", error(env));
    }

    @Test
    void a_value_out_of_its_range_is_a_one_line_error_naming_product_and_variable() {
        Map<String, String> env = profile();
        env.put("BENCH_ACKS", "2");
        assertEquals("p: BENCH_ACKS `2` is not one of 0, 1, all", error(env));
        env = profile();
        env.put("BENCH_COMPRESSION", "brotli");
        assertEquals("p: BENCH_COMPRESSION `brotli` is not one of gzip, lz4, none, snappy, zstd", error(env));
        env = profile();
        env.put("BENCH_FETCH_MIN_BYTES", "0");
        assertEquals("p: BENCH_FETCH_MIN_BYTES `0` is not an integer >= 1", error(env));
        env = profile();
        env.put("BENCH_FETCH_MAX_WAIT_MS", "ten");
        assertEquals("p: BENCH_FETCH_MAX_WAIT_MS `ten` is not an integer >= 0", error(env));
        env = profile();
        env.put("BENCH_LINGER_MS", " ");
        assertEquals("p: BENCH_LINGER_MS is not set (the suite sets it)", error(env));
    }

    @Test
    void static_membership_is_read_when_asked() {
        Map<String, String> env = profile();
        env.put("BENCH_GROUP_INSTANCE_ID", " g-member ");
        assertEquals(new StaticMembership("g-member", 6000), StaticMembership.from(new BenchEnv("p", env)));
        env.put("BENCH_SESSION_TIMEOUT_MS", "0");
        assertEquals("p: BENCH_SESSION_TIMEOUT_MS `0` is not an integer >= 1",
                assertThrows(IllegalArgumentException.class,
                        () -> StaticMembership.from(new BenchEnv("p", env))).getMessage());
    }

    private static ConsumerConfig consumer(String groupInstanceId) {
        Properties p = new Properties();
        p.setProperty(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.setProperty(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.setProperty(ConsumerConfig.GROUP_ID_CONFIG, "g");
        p.setProperty(ConsumerConfig.FETCH_MIN_BYTES_CONFIG, "1");
        p.setProperty(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "10");
        p.setProperty(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, "52428800");
        if (groupInstanceId != null) {
            p.setProperty(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, groupInstanceId);
            p.setProperty(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "6000");
        }
        return new ConsumerConfig(p);
    }

    private static Properties producer(String acks, boolean idempotence) {
        Properties p = new Properties();
        p.setProperty(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.setProperty(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.setProperty(ProducerConfig.LINGER_MS_CONFIG, "1");
        p.setProperty(ProducerConfig.ACKS_CONFIG, acks);
        p.setProperty(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, Boolean.toString(idempotence));
        p.setProperty(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        return p;
    }

    @Test
    void the_effective_config_is_what_the_clients_parsed_with_the_known_cost_burned() {
        assertEquals("{\"fetch_min_bytes\":1,\"fetch_max_wait_ms\":10,\"max_partition_fetch_bytes\":52428800,"
                        + "\"linger_ms\":1,\"acks\":\"all\",\"enable_idempotence\":true,\"compression\":\"lz4\","
                        + "\"commit_interval_ms\":1000,\"engine\":{\"work_ns_per_record\":0}}",
                ClientProfile.effectiveJson("p", consumer(null), new ProducerConfig(producer("all", true)),
                        1000, false, Map.of()));
        assertEquals("{\"fetch_min_bytes\":1,\"fetch_max_wait_ms\":10,\"max_partition_fetch_bytes\":52428800,"
                        + "\"linger_ms\":1,\"acks\":\"1\",\"enable_idempotence\":false,\"compression\":\"lz4\","
                        + "\"commit_interval_ms\":1000,\"engine\":{\"work_ns_per_record\":0}}",
                ClientProfile.effectiveJson("p", consumer(null), new ProducerConfig(producer("1", false)),
                        1000, false, Map.of()));
    }

    @Test
    void exactly_once_reports_the_retry_backoff_and_timeout_a_static_member_its_session_and_the_engine_its_settings() {
        Properties producer = producer("-1", true);
        producer.setProperty(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "t");
        producer.setProperty(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, "20");
        producer.setProperty(ProducerConfig.RETRY_BACKOFF_MAX_MS_CONFIG, "20");
        producer.setProperty(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "9000");
        Map<String, Object> engine = new LinkedHashMap<>();
        engine.put("transaction_naming", "pooling");
        engine.put("idle_us", 500L);
        assertEquals("{\"fetch_min_bytes\":1,\"fetch_max_wait_ms\":10,\"max_partition_fetch_bytes\":52428800,"
                        + "\"linger_ms\":1,\"acks\":\"all\",\"enable_idempotence\":true,\"compression\":\"lz4\","
                        + "\"session_timeout_ms\":6000,\"transaction_retry_backoff_ms\":20,\"transaction_timeout_ms\":9000,"
                        + "\"commit_interval_ms\":10,"
                        + "\"engine\":{\"transaction_naming\":\"pooling\",\"idle_us\":500,\"work_ns_per_record\":0}}",
                ClientProfile.effectiveJson("p", consumer("g-member-1"), new ProducerConfig(producer), 10, true,
                        engine));
        producer.setProperty(ProducerConfig.RETRY_BACKOFF_MAX_MS_CONFIG, "1000");
        assertEquals("p: the producer's retry.backoff.ms 20 and retry.backoff.max.ms 1000 differ",
                assertThrows(IllegalStateException.class, () -> ClientProfile.effectiveJson("p",
                        consumer("g-member-1"), new ProducerConfig(producer), 10, true, Map.of())).getMessage());
    }
}
