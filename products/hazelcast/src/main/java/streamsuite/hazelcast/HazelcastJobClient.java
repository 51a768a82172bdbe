package streamsuite.hazelcast;

import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.jet.Job;
import com.hazelcast.jet.config.JobConfig;
import com.hazelcast.jet.core.JobStatus;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.config.ConfigException;
import streamsuite.common.BenchEnv;
import streamsuite.common.ClientProfile;
import streamsuite.common.Settings;
import streamsuite.common.Workload;

/**
 * The cluster deployment's job client: a Hazelcast client (no member) that
 * connects to the run's members, submits the same Jet job as the embedded
 * product to the cluster, and prints the effective client config and
 * "hazelcast ready" once the job is RUNNING and the members' sources hold every
 * input partition. It stays connected while the job runs; SIGTERM cancels the
 * job. The job outlives this client: a killed client leaves the job running on
 * the members.
 */
public final class HazelcastJobClient {
    private static final long READY_TIMEOUT_S = 120;

    private HazelcastJobClient() {}

    public static void main(String[] args) throws Exception {
        HazelcastApp.quietLogging();
        BenchEnv env = BenchEnv.system(HazelcastApp.PRODUCT);
        Settings settings;
        ClusterMembers members;
        int partitions;
        String effective;
        try {
            settings = Settings.from(env, EnumSet.of(Workload.STATELESS));
            members = ClusterMembers.fromEnv(env, "BENCH_COUNT_MEMBER");
            partitions = env.intAtLeast("BENCH_INPUT_PARTITIONS", 1);
            effective = Clients.effectiveJson(settings, settings.commitIntervalMs(),
                    HazelcastApp.NONCOOPERATIVE_MAX_IDLE_US);
        } catch (IllegalArgumentException | ConfigException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        ClientConfig config = new ClientConfig();
        config.setClusterName(HazelcastApp.clusterName(settings));
        config.setProperty("hazelcast.logging.type", "jdk");
        config.setProperty("hazelcast.phone.home.enabled", "false");
        config.getNetworkConfig().setAddresses(members.addresses());
        HazelcastInstance client = HazelcastClient.newHazelcastClient(config);

        JobConfig jobConfig = HazelcastApp.jobConfig(settings);
        // A restarted client finds the job it submitted still running.
        Job job = client.getJet().getJob(jobConfig.getName());
        if (job == null || job.getStatus().isTerminal()) {
            job = client.getJet().newJob(HazelcastApp.pipeline(settings), jobConfig);
        }
        Job running = job;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(client, running), "streamsuite-stop"));
        System.err.printf("hazelcast: job %s (%s) on %d members, %s snapshots every %d ms%n",
                job.getIdString(), jobConfig.getName(), client.getCluster().getMembers().size(),
                jobConfig.getProcessingGuarantee(), jobConfig.getSnapshotIntervalMillis());

        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(READY_TIMEOUT_S);
        while (!(job.getStatus() == JobStatus.RUNNING
                && client.getMap(ClusterMembers.ASSIGNED_MAP).size() >= partitions)) {
            if (job.getStatus().isTerminal() || System.nanoTime() > deadline) {
                System.err.printf("hazelcast: the job did not start reading (status %s, %d of %d partitions assigned)%n",
                        job.getStatus(), client.getMap(ClusterMembers.ASSIGNED_MAP).size(), partitions);
                Runtime.getRuntime().halt(1);
            }
            Thread.sleep(20);
        }
        System.out.println(ClientProfile.EFFECTIVE_PREFIX + effective);
        System.out.println(HazelcastApp.READY_LINE);
        System.out.flush();
        Thread.currentThread().join();
    }

    /** SIGTERM: cancel the job, then disconnect. */
    private static void stop(HazelcastInstance client, Job job) {
        HazelcastApp.cancel(job);
        client.shutdown();
    }
}
