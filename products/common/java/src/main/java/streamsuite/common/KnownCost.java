package streamsuite.common;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A known extra CPU time burned for every input record of the stateless
 * workload: the product.yaml setting {@code work_ns_per_record}, which the
 * suite passes in BENCH_SETTINGS. It is a regression of known size, to show
 * the smallest one the release gate catches on a JVM line, as rustpipe's
 * setting of the same name does for rustpipe. 0 in every published
 * configuration.
 */
public final class KnownCost {
    /** Its key in product.yaml's `settings:`. */
    public static final String KEY = "work_ns_per_record";

    /** This process's cost: every JVM the suite starts for a run has the run's BENCH_SETTINGS. */
    static final long NS_PER_RECORD = nsPerRecord(BenchEnv.system("bench-common"));

    private KnownCost() {}

    /**
     * The nanoseconds per record in {@code env}'s BENCH_SETTINGS (a JSON
     * object); 0 when the variable or the key is absent.
     *
     * @throws IllegalArgumentException when BENCH_SETTINGS is not a JSON
     *     object or the value is not a whole number of at least 0
     */
    public static long nsPerRecord(BenchEnv env) {
        JsonNode value = env.productSettings().path(KEY);
        if (value.isMissingNode() || value.isNull()) {
            return 0;
        }
        if (!value.isIntegralNumber() || !value.canConvertToLong() || value.asLong() < 0) {
            throw env.error(KEY + " `" + value + "` is not a whole number of nanoseconds >= 0");
        }
        return value.asLong();
    }

    /**
     * Checks {@code env}'s cost against the run's workload: it acts in the
     * stateless workload's decode only, and set for another workload it would
     * silently do nothing.
     */
    public static void check(BenchEnv env, Workload workload) {
        if (nsPerRecord(env) > 0 && workload != Workload.STATELESS) {
            throw env.error(KEY + " acts on the stateless workload only, not `" + workload.suiteName() + "`");
        }
    }

    /** Keeps this thread busy for {@code ns} nanoseconds. */
    static void burn(long ns) {
        if (ns <= 0) {
            return;
        }
        long until = System.nanoTime() + ns;
        while (System.nanoTime() - until < 0) {
            Thread.onSpinWait();
        }
    }
}
