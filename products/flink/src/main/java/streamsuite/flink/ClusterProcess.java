package streamsuite.flink;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint;
import org.apache.flink.runtime.taskexecutor.TaskManagerRunner;

/**
 * One process of the cluster deployment's standalone session cluster:
 * Flink's own entrypoint (StandaloneSessionClusterEntrypoint for the
 * JobManager, TaskManagerRunner for a TaskManager) with the arguments
 * products/flink/cluster.sh computed as Flink's start scripts do, and the
 * readiness line the suite waits for, once the JobManager's REST endpoint
 * answers (the JobManager) or lists this TaskManager's resource id (a
 * TaskManager). Flink's entrypoints end the JVM themselves.
 */
public final class ClusterProcess {
    private static final Duration POLL = Duration.ofMillis(100);

    private ClusterProcess() {}

    public static void main(String[] args) throws Exception {
        String role = args[0];
        String[] flinkArgs = Arrays.copyOfRange(args, 1, args.length);
        String rest = "http://127.0.0.1:" + System.getenv("BENCH_PORT_REST");
        // cluster.sh names a TaskManager after its member index and its pid
        // (this JVM's, which the script exec'd into): a TaskManager restarted
        // after a kill registers as a new one rather than as its dead self.
        String resourceId = "taskmanager-" + System.getenv("BENCH_MEMBER_INDEX") + "-" + ProcessHandle.current().pid();
        Thread entrypoint = new Thread(() -> {
            try {
                switch (role) {
                    case "jobmanager" -> StandaloneSessionClusterEntrypoint.main(flinkArgs);
                    case "taskmanager" -> TaskManagerRunner.main(flinkArgs);
                    default -> throw new IllegalArgumentException("unknown role " + role);
                }
            } catch (Throwable e) {
                System.err.println("flink " + role + ": " + e);
                e.printStackTrace();
                Runtime.getRuntime().halt(1);
            }
        }, "flink-" + role);
        entrypoint.start();

        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        String path = role.equals("jobmanager") ? "/overview" : "/taskmanagers";
        while (true) {
            try {
                HttpResponse<String> response = http.send(
                        HttpRequest.newBuilder(URI.create(rest + path)).timeout(Duration.ofSeconds(1)).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (response.statusCode() == 200
                        && (role.equals("jobmanager") || response.body().contains("\"id\":\"" + resourceId + "\""))) {
                    break;
                }
            } catch (java.io.IOException e) {
                // Not listening yet.
            }
            Thread.sleep(POLL.toMillis());
        }
        System.out.println("flink " + role + " ready");
        System.out.flush();
        entrypoint.join();
    }
}
