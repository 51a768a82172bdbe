package streamsuite.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The run's settings read from BENCH_* values, and the workloads by the suite's names. */
class SettingsTest {
    private static final Set<Workload> ALL = EnumSet.allOf(Workload.class);

    private static Map<String, String> run() {
        Map<String, String> env = ClientProfileTest.profile();
        env.put("BENCH_BOOTSTRAP", "127.0.0.1:9092");
        env.put("BENCH_INPUT_TOPIC", "in");
        env.put("BENCH_OUTPUT_TOPIC", "out");
        env.put("BENCH_GROUP_ID", "g");
        env.put("BENCH_TRANSACTIONAL_ID", "g-tx");
        env.put("BENCH_DELIVERY", "exactly-once");
        env.put("BENCH_COMMIT_INTERVAL_MS", "10");
        env.put("BENCH_PARALLELISM", "2");
        env.put("BENCH_WORKLOAD", "windowed-lowcard");
        return env;
    }

    private static String error(Map<String, String> env, Set<Workload> implemented) {
        return assertThrows(IllegalArgumentException.class,
                () -> Settings.from(new BenchEnv("p", env), implemented)).getMessage();
    }

    @Test
    void the_settings_are_read_from_their_variables() {
        Settings settings = Settings.from(new BenchEnv("p", run()), ALL);
        assertEquals(new Settings("127.0.0.1:9092", "in", "out", "g", "g-tx", true, 10, 2, Workload.WINDOWED_LOWCARD,
                new ClientProfile(1, 10, 52428800, 1, "all", true, "lz4", 20, 9000)), settings);
        assertEquals("windowed-lowcard", settings.workload().suiteName());
    }

    @Test
    void the_transactional_id_and_the_parallelism_have_defaults() {
        Map<String, String> env = run();
        env.remove("BENCH_TRANSACTIONAL_ID");
        env.remove("BENCH_PARALLELISM");
        env.put("BENCH_DELIVERY", "at-least-once");
        Settings settings = Settings.from(new BenchEnv("p", env), ALL);
        assertEquals("g-txn", settings.transactionalId());
        assertEquals(1, settings.parallelism());
        assertEquals(false, settings.exactlyOnce());
        assertEquals(-1, settings.client().transactionRetryBackoffMs());
        assertEquals(-1, settings.client().transactionTimeoutMs());
    }

    @Test
    void a_workload_the_product_does_not_implement_is_the_one_error() {
        Map<String, String> env = run();
        env.put("BENCH_WORKLOAD", "passthrough");
        env.remove("BENCH_BOOTSTRAP");
        assertEquals("p: workload `passthrough` is not implemented", error(env, EnumSet.of(Workload.STATELESS)));
        env.put("BENCH_WORKLOAD", "nosuch");
        assertEquals("p: workload `nosuch` is not implemented", error(env, ALL));
        env.put("BENCH_WORKLOAD", "stateless");
        assertEquals("p: BENCH_BOOTSTRAP is not set (the suite sets it)", error(env, ALL));
    }

    @Test
    void an_invalid_delivery_commit_interval_or_parallelism_is_refused() {
        Map<String, String> env = run();
        env.put("BENCH_DELIVERY", "at-most-once");
        assertEquals("p: BENCH_DELIVERY `at-most-once` is not at-least-once or exactly-once", error(env, ALL));
        env = run();
        env.put("BENCH_COMMIT_INTERVAL_MS", "-1");
        assertEquals("p: BENCH_COMMIT_INTERVAL_MS `-1` is not an integer >= 0", error(env, ALL));
        env = run();
        env.put("BENCH_PARALLELISM", "0");
        assertEquals("p: BENCH_PARALLELISM `0` is not an integer >= 1", error(env, ALL));
    }
}
