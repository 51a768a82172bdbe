package streamsuite.kstreams;

/** The workloads this product runs (BENCH_WORKLOAD), by the suite's names. */
enum Workload {
    /** Filter-and-enrich, record at a time ({@link Stateless}). */
    STATELESS("stateless"),
    /** The identity job: every value's bytes forwarded undecoded. */
    PASSTHROUGH("passthrough"),
    /** 1 s tumbling event-time windows per (region, service) ({@link WindowedLowcard}). */
    WINDOWED_LOWCARD("windowed-lowcard");

    private final String suiteName;

    Workload(String suiteName) {
        this.suiteName = suiteName;
    }

    /** The name the suite passes in BENCH_WORKLOAD. */
    String suiteName() {
        return suiteName;
    }

    /**
     * The workload BENCH_WORKLOAD names.
     *
     * @throws IllegalArgumentException (one line for the suite's log) when this
     *     product does not implement it: running another job instead would be
     *     measured as that workload
     */
    static Workload parse(String product, String name) {
        for (Workload workload : values()) {
            if (workload.suiteName.equals(name)) {
                return workload;
            }
        }
        throw new IllegalArgumentException(product + ": workload `" + name + "` is not implemented");
    }
}
