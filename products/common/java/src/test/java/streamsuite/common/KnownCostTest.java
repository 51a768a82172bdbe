package streamsuite.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The known extra cost per record, read from BENCH_SETTINGS, and its burn. */
class KnownCostTest {
    private static BenchEnv settings(String json) {
        return new BenchEnv("p", Map.of("BENCH_SETTINGS", json));
    }

    private static String error(String json) {
        return assertThrows(IllegalArgumentException.class, () -> KnownCost.nsPerRecord(settings(json)))
                .getMessage();
    }

    @Test
    void the_cost_is_the_settings_work_ns_per_record_and_0_without_it() {
        assertEquals(900, KnownCost.nsPerRecord(settings("{\"work_ns_per_record\":900,\"other\":\"x\"}")));
        assertEquals(0, KnownCost.nsPerRecord(settings("{\"other\":1}")));
        assertEquals(0, KnownCost.nsPerRecord(new BenchEnv("p", Map.of())));
    }

    @Test
    void a_cost_that_is_not_whole_nanoseconds_is_refused_naming_the_product_and_key() {
        assertEquals("p: work_ns_per_record `-1` is not a whole number of nanoseconds >= 0",
                error("{\"work_ns_per_record\":-1}"));
        assertEquals("p: work_ns_per_record `1.5` is not a whole number of nanoseconds >= 0",
                error("{\"work_ns_per_record\":1.5}"));
        assertEquals("p: BENCH_SETTINGS `[1]` is not a JSON object", error("[1]"));
        assertTrue(error("{").startsWith("p: BENCH_SETTINGS is not JSON: "), error("{"));
    }

    @Test
    void a_cost_is_refused_for_a_workload_other_than_stateless() {
        BenchEnv env = settings("{\"work_ns_per_record\":900}");
        KnownCost.check(env, Workload.STATELESS);
        KnownCost.check(settings("{\"work_ns_per_record\":0}"), Workload.PASSTHROUGH);
        assertEquals("p: work_ns_per_record acts on the stateless workload only, not `passthrough`",
                assertThrows(IllegalArgumentException.class, () -> KnownCost.check(env, Workload.PASSTHROUGH))
                        .getMessage());
    }

    @Test
    void a_burn_keeps_the_thread_busy_at_least_that_long() {
        long started = System.nanoTime();
        KnownCost.burn(5_000_000);
        assertTrue(System.nanoTime() - started >= 5_000_000);
    }
}
