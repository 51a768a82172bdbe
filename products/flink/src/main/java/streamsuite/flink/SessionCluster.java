package streamsuite.flink;

import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.Optional;
import streamsuite.common.BenchEnv;

/**
 * The standalone session cluster of the cluster deployment, as the suite
 * starts it ({@link ClusterProcess}): its JobManager's REST endpoint on
 * 127.0.0.1:BENCH_PORT_REST and BENCH_COUNT_TASKMANAGER TaskManagers of
 * BENCH_PARALLELISM slots each. Absent in the embedded deployment, where the
 * job runs in a MiniCluster inside the app.
 */
record SessionCluster(int restPort, int taskManagers) {
    static Optional<SessionCluster> fromEnv(BenchEnv env) {
        if (!"cluster".equals(env.orElse("BENCH_DEPLOYMENT", "embedded"))) {
            return Optional.empty();
        }
        return Optional.of(new SessionCluster(
                env.intAtLeast("BENCH_PORT_REST", 1), env.intAtLeast("BENCH_COUNT_TASKMANAGER", 1)));
    }

    /** The job's parallelism: every slot of every TaskManager. */
    int parallelism(int slotsPerTaskManager) {
        return slotsPerTaskManager * taskManagers;
    }

    /** The jar the job's classes are shipped to the cluster in: this app's own. */
    static String appJar() {
        try {
            return Path.of(FlinkApp.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException("locating the app's jar", e);
        }
    }
}
