package streamsuite.common;

/**
 * The static membership the suite asks of a consumer that joins its group
 * (BENCH_GROUP_INSTANCE_ID as group.instance.id, BENCH_SESSION_TIMEOUT_MS as
 * session.timeout.ms): a process restarted after a kill rejoins under the same
 * id and takes its partitions back at once, instead of waiting for the dead
 * member's session to time out. An app whose source assigns its partitions
 * itself joins no group and has none to apply (product.yaml
 * `client_exceptions`).
 */
public record StaticMembership(String groupInstanceId, int sessionTimeoutMs) {

    /** The membership in {@code env}. */
    public static StaticMembership from(BenchEnv env) {
        return new StaticMembership(
                env.require("BENCH_GROUP_INSTANCE_ID").trim(),
                env.intAtLeast("BENCH_SESSION_TIMEOUT_MS", 1));
    }
}
