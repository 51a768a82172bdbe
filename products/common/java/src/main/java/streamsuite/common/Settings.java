package streamsuite.common;

import java.util.Set;

/**
 * The run's settings, read from the BENCH_* variables the suite sets: where to
 * read and write, the consumer group, the delivery guarantee and its commit
 * interval, the parallelism, the workload and the client profile.
 */
public record Settings(
        String bootstrap,
        String inputTopic,
        String outputTopic,
        String groupId,
        String transactionalId,
        boolean exactlyOnce,
        long commitIntervalMs,
        int parallelism,
        Workload workload,
        ClientProfile client) {

    /** This process's settings, for {@code product}, which runs the {@code implemented} workloads. */
    public static Settings fromEnv(String product, Set<Workload> implemented) {
        return from(BenchEnv.system(product), implemented);
    }

    /**
     * The settings in {@code env}. Without BENCH_TRANSACTIONAL_ID the
     * transactional id is the group's with "-txn"; without BENCH_PARALLELISM
     * the parallelism is 1.
     *
     * @throws IllegalArgumentException (one line for the suite's log) when a
     *     variable is missing or invalid
     */
    public static Settings from(BenchEnv env, Set<Workload> implemented) {
        // First: a workload this product does not run is the one line to report.
        Workload workload = Workload.parse(env.product(), env.require("BENCH_WORKLOAD"), implemented);
        KnownCost.check(env, workload);
        String delivery = env.require("BENCH_DELIVERY");
        boolean exactlyOnce = switch (delivery) {
            case "exactly-once" -> true;
            case "at-least-once" -> false;
            default -> throw env.error("BENCH_DELIVERY `" + delivery + "` is not at-least-once or exactly-once");
        };
        String groupId = env.require("BENCH_GROUP_ID");
        return new Settings(
                env.require("BENCH_BOOTSTRAP"),
                env.require("BENCH_INPUT_TOPIC"),
                env.require("BENCH_OUTPUT_TOPIC"),
                groupId,
                env.orElse("BENCH_TRANSACTIONAL_ID", groupId + "-txn"),
                exactlyOnce,
                env.intAtLeast("BENCH_COMMIT_INTERVAL_MS", 0),
                env.intAtLeast("BENCH_PARALLELISM", 1, 1),
                workload,
                ClientProfile.from(env, exactlyOnce));
    }
}
