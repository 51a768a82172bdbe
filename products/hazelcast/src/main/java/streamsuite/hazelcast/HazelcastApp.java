package streamsuite.hazelcast;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.NetworkConfig;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.jet.Job;
import com.hazelcast.jet.config.JobConfig;
import com.hazelcast.jet.config.ProcessingGuarantee;
import com.hazelcast.jet.core.JobStatus;
import com.hazelcast.jet.kafka.KafkaSinks;
import com.hazelcast.jet.kafka.KafkaSources;
import com.hazelcast.jet.pipeline.Pipeline;
import com.hazelcast.jet.pipeline.Sink;
import com.hazelcast.jet.pipeline.StreamSource;
import com.hazelcast.logging.LogEvent;
import com.hazelcast.logging.LogListener;
import java.io.IOException;
import java.io.InputStream;
import java.util.EnumSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.logging.LogManager;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.config.ConfigException;
import streamsuite.common.ClientProfile;
import streamsuite.common.Settings;
import streamsuite.common.Stateless;
import streamsuite.common.Workload;

/**
 * streamsuite's Hazelcast product: one embedded Hazelcast member (Community
 * Edition, loopback only, no discovery, no phone-home, a cluster name of the
 * run's own) running one Jet job for the stateless workload:
 * KafkaSources.kafka (value bytes) -> decode -> filter eu-* -> enrich and encode
 * -> KafkaSinks.kafka.
 *
 * <p>At-least-once runs the job with processing guarantee AT_LEAST_ONCE and
 * exactly-once with EXACTLY_ONCE and the transactional sink, both snapshotting
 * every BENCH_COMMIT_INTERVAL_MS. The source keeps its offsets in the job's
 * snapshots (held in the member's memory) and starts from the earliest
 * offset; its consumer's auto-commit reports the positions it has polled to
 * the run's consumer group, every BENCH_COMMIT_INTERVAL_MS but no more often
 * than every 100 ms. The at-least-once sink flushes its
 * producer at each snapshot; the exactly-once sink writes each snapshot's
 * output in one Kafka transaction, committed when the snapshot completes, with
 * transactional ids Jet derives from the job's id and name (the name is
 * BENCH_TRANSACTIONAL_ID).
 *
 * <p>Prints "effective client config: {JSON}" and then the readiness line once
 * the job is RUNNING and its source has been assigned its partition. SIGTERM
 * cancels the job and shuts the member down.
 */
public final class HazelcastApp {
    /** The name the app's messages start with. */
    static final String PRODUCT = "hazelcast";
    /** The line product.yaml's readiness check looks for. */
    static final String READY_LINE = "hazelcast ready";
    /** How long start-up (member, job, partition assignment) may take. */
    private static final long READY_TIMEOUT_S = 120;
    private static final long STOP_TIMEOUT_MS = 5000;
    /** See {@link #memberConfig}. */
    static final long NONCOOPERATIVE_MAX_IDLE_US = 500;

    private static volatile boolean stopping;

    private HazelcastApp() {}

    public static void main(String[] args) throws Exception {
        quietLogging();
        Settings settings;
        String effective;
        try {
            settings = Settings.fromEnv(PRODUCT, EnumSet.of(Workload.STATELESS));
            effective = Clients.effectiveJson(settings, settings.commitIntervalMs(), NONCOOPERATIVE_MAX_IDLE_US);
        } catch (IllegalArgumentException | ConfigException e) {
            // A missing variable, or a profile the Java client refuses.
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }

        HazelcastInstance member = Hazelcast.newHazelcastInstance(memberConfig(settings));
        CountDownLatch assigned = new CountDownLatch(1);
        member.getLoggingService().addLogListener(Level.INFO,
                new PartitionAssigned(settings.inputTopic(), partition -> assigned.countDown()));

        JobConfig jobConfig = jobConfig(settings);
        Job job = member.getJet().newJob(pipeline(settings), jobConfig);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(member, job), "streamsuite-stop"));
        System.err.printf("hazelcast: job %s (%s), %s snapshots every %d ms%n",
                job.getIdString(), jobConfig.getName(), jobConfig.getProcessingGuarantee(),
                jobConfig.getSnapshotIntervalMillis());

        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(READY_TIMEOUT_S);
        while (!(job.getStatus() == JobStatus.RUNNING && assigned.await(5, TimeUnit.MILLISECONDS))) {
            if (job.getStatus().isTerminal() || System.nanoTime() > deadline) {
                System.err.println("hazelcast: the job did not start reading (status " + job.getStatus() + ")");
                Runtime.getRuntime().halt(1);
            }
        }
        System.out.println(ClientProfile.EFFECTIVE_PREFIX + effective);
        System.out.println(READY_LINE);
        System.out.flush();

        try {
            job.join();
        } catch (Exception e) {
            if (!stopping) {
                System.err.println("hazelcast: the job failed: " + e);
                e.printStackTrace();
                Runtime.getRuntime().halt(1);
            }
        }
    }

    /**
     * The stateless job: Kafka source, three stateless stages, Kafka sink. The
     * stages have the same local parallelism, so Jet fuses them into one
     * vertex (one processor calls decode, filter and enrich in turn).
     */
    static Pipeline pipeline(Settings settings) {
        StreamSource<byte[]> source = KafkaSources.<byte[], byte[], byte[]>kafka(
                Clients.consumer(settings), ConsumerRecord::value, settings.inputTopic());
        Sink<byte[]> sink = KafkaSinks.<byte[]>kafka(Clients.producer(settings))
                .topic(settings.outputTopic())
                // The sink follows the job's guarantee: transactions under
                // EXACTLY_ONCE, flushes at each snapshot under AT_LEAST_ONCE.
                .exactlyOnce(true)
                .build();
        Pipeline pipeline = Pipeline.create();
        pipeline.readFrom(source)
                // Kafka timestamps are not used: no watermarks are made.
                .withoutTimestamps()
                .setLocalParallelism(settings.parallelism())
                .setName("kafka-source")
                .map(Stateless::decode)
                .setLocalParallelism(settings.parallelism())
                .setName("decode")
                .filter(Stateless::kept)
                .setLocalParallelism(settings.parallelism())
                .setName("filter")
                .map(Stateless::enrich)
                .setLocalParallelism(settings.parallelism())
                .setName("enrich")
                .writeTo(sink)
                .setName("kafka-sink");
        return pipeline;
    }

    /**
     * The job, named BENCH_TRANSACTIONAL_ID: the run's guarantee, a snapshot
     * every BENCH_COMMIT_INTERVAL_MS.
     */
    static JobConfig jobConfig(Settings settings) {
        return new JobConfig()
                .setName(settings.transactionalId())
                .setProcessingGuarantee(settings.exactlyOnce()
                        ? ProcessingGuarantee.EXACTLY_ONCE
                        : ProcessingGuarantee.AT_LEAST_ONCE)
                .setSnapshotIntervalMillis(settings.commitIntervalMs());
    }

    /** The run's own cluster name, so members of two runs never meet. */
    static String clusterName(Settings settings) {
        return "streamsuite-" + settings.groupId();
    }

    /** One member on 127.0.0.1 that looks for no other, with Jet enabled. */
    static Config memberConfig(Settings settings) {
        Config config = new Config();
        config.setClusterName(clusterName(settings));
        config.setProperty("hazelcast.phone.home.enabled", "false");
        config.setProperty("hazelcast.logging.type", "jdk");
        // The app's own hook cancels the job before the member goes.
        config.setProperty("hazelcast.shutdownhook.enabled", "false");
        // Bind the member's socket to the loopback interface only.
        config.setProperty("hazelcast.socket.bind.any", "false");
        NetworkConfig network = config.getNetworkConfig();
        network.setPortAutoIncrement(true);
        network.getInterfaces().setEnabled(true).addInterface("127.0.0.1");
        network.getRestApiConfig().setEnabled(false);
        JoinConfig join = network.getJoin();
        join.getMulticastConfig().setEnabled(false);
        join.getTcpIpConfig().setEnabled(false);
        join.getAutoDetectionConfig().setEnabled(false);
        config.getJetConfig().setEnabled(true);
        // The Kafka source and sink are non-cooperative processors, each on a
        // thread of its own that parks when a call made no progress, backing off
        // up to this long (Jet's default: 5000 µs; its cooperative threads stop
        // at 500 µs). The source's poll(0) finds new records only when its
        // thread wakes, so the same 500 µs cap as the cooperative threads.
        config.setProperty("hazelcast.jet.idle.noncooperative.max.microseconds",
                Long.toString(NONCOOPERATIVE_MAX_IDLE_US));
        return config;
    }

    /** SIGTERM: cancel the job, then shut the member down. */
    private static void stop(HazelcastInstance member, Job job) {
        stopping = true;
        cancel(job);
        member.shutdown();
    }

    /**
     * Cancels the job (an open transaction is aborted) and waits up to
     * STOP_TIMEOUT_MS for it to end.
     */
    static void cancel(Job job) {
        long started = System.nanoTime();
        try {
            job.cancel();
            long deadline = started + TimeUnit.MILLISECONDS.toNanos(STOP_TIMEOUT_MS);
            while (!job.getStatus().isTerminal() && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            // Jet reports a cancelled job as FAILED (with a CancellationException).
            System.err.printf("hazelcast: job cancelled, status %s after %d ms%n", job.getStatus(),
                    (System.nanoTime() - started) / 1_000_000);
        } catch (Exception e) {
            System.err.println("hazelcast: cancelling the job: " + e);
        }
    }

    /**
     * Jet's Kafka source has no public hook for its partition assignment; it
     * logs it ("New partition(s) assigned: [topic-0, topic-1]") through
     * Hazelcast's logging service, whose listeners receive it whatever the log
     * level. Each partition of the topic named there is handed to
     * {@code onAssigned}.
     */
    static final class PartitionAssigned implements LogListener {
        private final String topic;
        private final Consumer<String> onAssigned;

        PartitionAssigned(String topic, Consumer<String> onAssigned) {
            this.topic = topic;
            this.onAssigned = onAssigned;
        }

        @Override
        public void log(LogEvent event) {
            String message = event.getLogRecord().getMessage();
            if (message == null || !message.contains("New partition(s) assigned")) {
                return;
            }
            Matcher partitions = Pattern.compile(Pattern.quote(topic) + "-\\d+").matcher(message);
            while (partitions.find()) {
                onAssigned.accept(partitions.group());
            }
        }
    }

    /** Hazelcast logs through java.util.logging to standard error; see logging.properties. */
    static void quietLogging() throws IOException {
        try (InputStream in = HazelcastApp.class.getResourceAsStream("/logging.properties")) {
            LogManager.getLogManager().readConfiguration(in);
        }
    }
}
