package streamsuite.hazelcast;

import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import org.apache.kafka.common.config.ConfigException;
import streamsuite.common.BenchEnv;
import streamsuite.common.Settings;
import streamsuite.common.Workload;

/**
 * One member of the cluster deployment: it joins the members started before it
 * and prints "hazelcast member ready" once the cluster has them all and
 * itself and is safe (every partition backed up). It runs no job of its own; {@link HazelcastJobClient} submits the job
 * to the cluster, and Jet runs the job's processors on every member. A log
 * listener records in the cluster's {@link ClusterMembers#ASSIGNED_MAP} each
 * input partition this member's source is assigned, which the job client
 * waits for. SIGTERM shuts the member down; the job client cancels the job
 * first.
 */
public final class HazelcastMember {
    static final String READY_LINE = "hazelcast member ready";
    private static final long JOIN_TIMEOUT_S = 120;

    private HazelcastMember() {}

    public static void main(String[] args) throws Exception {
        HazelcastApp.quietLogging();
        BenchEnv env = BenchEnv.system(HazelcastApp.PRODUCT);
        Settings settings;
        ClusterMembers members;
        int index;
        try {
            settings = Settings.from(env, EnumSet.of(Workload.STATELESS));
            members = ClusterMembers.fromEnv(env, "BENCH_MEMBER_COUNT");
            index = env.intAtLeast("BENCH_MEMBER_INDEX", 0);
            if (index >= members.count()) {
                throw env.error("BENCH_MEMBER_INDEX " + index + " is not below BENCH_MEMBER_COUNT " + members.count());
            }
        } catch (IllegalArgumentException | ConfigException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        HazelcastInstance member = Hazelcast.newHazelcastInstance(members.memberConfig(settings, index));
        member.getLoggingService().addLogListener(Level.INFO,
                new HazelcastApp.PartitionAssigned(settings.inputTopic(), partition ->
                        member.getMap(ClusterMembers.ASSIGNED_MAP).put(partition, member.getName())));
        Runtime.getRuntime().addShutdownHook(new Thread(member::shutdown, "streamsuite-stop"));

        // The members before this one are up: ready once they have all joined
        // it and the cluster is safe (every partition has its backup again),
        // as an operator waits before restarting the next member. A member
        // restarted after a kill is ready only then too: a second kill
        // before the backups are back would lose what only one member held.
        long started = System.nanoTime();
        long deadline = started + TimeUnit.SECONDS.toNanos(JOIN_TIMEOUT_S);
        while (member.getCluster().getMembers().size() < index + 1
                || !member.getPartitionService().isClusterSafe()) {
            if (System.nanoTime() > deadline) {
                System.err.printf("hazelcast: member %d sees %d members (expected %d), cluster safe %b, after %d s%n",
                        index, member.getCluster().getMembers().size(), index + 1,
                        member.getPartitionService().isClusterSafe(), JOIN_TIMEOUT_S);
                Runtime.getRuntime().halt(1);
            }
            Thread.sleep(50);
        }
        System.err.printf("hazelcast: member %d of %d on port %d, cluster of %d, safe after %d ms%n", index,
                members.count(), members.ports().get(index), member.getCluster().getMembers().size(),
                (System.nanoTime() - started) / 1_000_000);
        System.out.println(READY_LINE);
        System.out.flush();
        Thread.currentThread().join();
    }
}
