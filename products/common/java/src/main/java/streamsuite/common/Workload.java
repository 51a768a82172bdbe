package streamsuite.common;

import java.util.Set;

/** The workloads the JVM apps run (BENCH_WORKLOAD), by the suite's names. */
public enum Workload {
    /** Filter-and-enrich, record at a time ({@link Stateless}). */
    STATELESS("stateless"),
    /** The identity job: every value's bytes forwarded undecoded. */
    PASSTHROUGH("passthrough"),
    /** 1 s tumbling event-time windows per (region, service). */
    WINDOWED_LOWCARD("windowed-lowcard");

    private final String suiteName;

    Workload(String suiteName) {
        this.suiteName = suiteName;
    }

    /** The name the suite passes in BENCH_WORKLOAD. */
    public String suiteName() {
        return suiteName;
    }

    /**
     * The workload {@code name} names, when {@code product} implements it.
     *
     * @throws IllegalArgumentException (one line for the suite's log) when the
     *     product does not implement it: running another job instead would be
     *     measured as that workload
     */
    public static Workload parse(String product, String name, Set<Workload> implemented) {
        for (Workload workload : values()) {
            if (workload.suiteName.equals(name) && implemented.contains(workload)) {
                return workload;
            }
        }
        throw new IllegalArgumentException(product + ": workload `" + name + "` is not implemented");
    }
}
