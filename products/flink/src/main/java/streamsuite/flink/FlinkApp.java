package streamsuite.flink;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.api.common.serialization.SerializationSchema;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.lineage.DefaultKafkaDatasetFacet;
import org.apache.flink.connector.kafka.lineage.KafkaDatasetFacet;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.sink.KafkaSinkBuilder;
import org.apache.flink.connector.kafka.sink.TransactionNamingStrategy;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.core.execution.CheckpointingMode;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.lineage.LineageDataset;
import org.apache.flink.streaming.api.lineage.LineageVertex;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import streamsuite.common.BenchEnv;
import streamsuite.common.ClientProfile;
import streamsuite.common.Settings;
import streamsuite.common.Stateless;
import streamsuite.common.Workload;

/**
 * streamsuite's Apache Flink product: a DataStream job per workload, run in a
 * local MiniCluster inside this JVM. Kafka source, the workload's operators,
 * Kafka sink: stateless (one filter-and-enrich flatMap) and passthrough (none)
 * are chained into one task; windowed-lowcard's keyBy splits the job in two
 * tasks joined by a network exchange ({@link WindowedLowcard}).
 *
 * <p>Offsets reach the consumer group only when a checkpoint completes, so both
 * lines checkpoint at the run's commit interval: AT_LEAST_ONCE checkpoints with
 * an at-least-once sink, or EXACTLY_ONCE checkpoints with the transactional
 * (two-phase commit) sink. Checkpoints are kept in a folder named after the
 * consumer group, and a restart with the same environment (after a SIGKILL, say)
 * resumes from the newest one: that is how Flink commits or aborts the Kafka
 * transactions a killed process left behind, so exactly-once holds across it.
 */
public final class FlinkApp {
    /** The name the app's messages start with. */
    static final String PRODUCT = "flink";
    /** The line product.yaml's readiness check looks for. */
    static final String READY_LINE = "flink ready";
    /** Flink refuses checkpoint intervals below this (CheckpointCoordinatorConfiguration). */
    static final long MIN_CHECKPOINT_INTERVAL_MS = 10;
    /**
     * Producer transaction timeout: above any plausible restart gap (a restored
     * transaction must still be open to be committed), far below the broker's
     * transaction.max.timeout.ms (15 min), and it bounds how long a transaction
     * abandoned for good keeps read_committed readers waiting.
     */
    static final String TRANSACTION_TIMEOUT_MS = "120000";
    /** See {@link #configuration}: how long a network buffer waits for more records. */
    static final Duration NETWORK_BUFFER_TIMEOUT = Duration.ofMillis(1);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(5);

    private FlinkApp() {}

    public static void main(String[] args) throws Exception {
        Settings settings;
        TransactionNamingStrategy naming;
        try {
            settings = Settings.fromEnv(PRODUCT, EnumSet.allOf(Workload.class));
            naming = TransactionNaming.fromEnv(BenchEnv.system(PRODUCT));
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        Path checkpoints = checkpointRoot(settings);
        Optional<Path> resume = newestCheckpoint(checkpoints);
        long interval = Math.max(settings.commitIntervalMs(), MIN_CHECKPOINT_INTERVAL_MS);
        if (interval != settings.commitIntervalMs()) {
            System.err.printf("flink: commit interval %d ms is below Flink's minimum checkpoint interval; checkpointing every %d ms%n",
                    settings.commitIntervalMs(), interval);
        }
        System.err.printf("flink: %s, %s checkpoints every %d ms into %s%s%n",
                settings.exactlyOnce() ? "exactly-once" : "at-least-once",
                settings.exactlyOnce() ? "EXACTLY_ONCE" : "AT_LEAST_ONCE",
                interval, checkpoints,
                resume.map(p -> ", resuming from " + p).orElse(""));

        Optional<SessionCluster> cluster;
        try {
            cluster = SessionCluster.fromEnv(BenchEnv.system(PRODUCT));
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        int parallelism = cluster.map(c -> c.parallelism(settings.parallelism())).orElse(settings.parallelism());
        Configuration conf = configuration(settings, parallelism, interval, checkpoints, resume, cluster.isPresent());
        // Embedded: a MiniCluster in this JVM. Cluster: the job is submitted to
        // the session cluster's JobManager through Flink's REST client, this
        // app's jar shipped with it, and this process stays its client.
        StreamExecutionEnvironment env = cluster.isPresent()
                ? StreamExecutionEnvironment.createRemoteEnvironment(
                        "127.0.0.1", cluster.get().restPort(), conf, SessionCluster.appJar())
                : StreamExecutionEnvironment.createLocalEnvironment(conf);
        KafkaSink<byte[]> sink = sink(settings, naming);
        KafkaSource<?> source = pipeline(env, settings, sink);
        String effective;
        try {
            effective = effectiveClientConfig(source, sink, settings, naming,
                    env.getCheckpointConfig().getCheckpointInterval());
        } catch (ConfigException e) {
            // A profile the Java client refuses (acks 1 or 0 with idempotence, say).
            System.err.println("flink: the client refuses this configuration: " + e.getMessage());
            System.exit(2);
            return;
        }
        System.out.println(ClientProfile.EFFECTIVE_PREFIX + effective);
        System.out.flush();

        JobClient job = env.executeAsync("streamsuite-" + settings.workload().suiteName());
        Path jobDir = checkpoints.resolve(job.getJobID().toHexString());
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(job, jobDir), "streamsuite-stop"));

        // Ready once this job has completed a checkpoint: every task is then
        // running, the source reader included.
        while (!hasCompletedCheckpoint(jobDir)) {
            if (job.getJobExecutionResult().isDone()) {
                break;
            }
            Thread.sleep(5);
        }
        if (!job.getJobExecutionResult().isDone()) {
            readyAt = System.nanoTime();
            firstCheckpoint = newestCheckpointId(jobDir);
            System.out.println(READY_LINE);
            System.out.flush();
            removeOtherJobs(checkpoints, jobDir);
        }
        try {
            job.getJobExecutionResult().get();
        } catch (Exception e) {
            if (!stopping) {
                System.err.println("flink: the job failed: " + e);
                e.printStackTrace();
                Runtime.getRuntime().halt(1);
            }
        }
    }

    private static volatile boolean stopping;
    private static volatile long readyAt;
    private static volatile long firstCheckpoint = -1;

    /** SIGTERM: cancel the job (open transactions are aborted) and let main return. */
    private static void stop(JobClient job, Path jobDir) {
        stopping = true;
        long started = System.nanoTime();
        long last = newestCheckpointId(jobDir);
        if (firstCheckpoint >= 0 && last > firstCheckpoint) {
            // How often checkpoints (so commits) really happened, against the interval asked.
            double seconds = (started - readyAt) / 1e9;
            System.err.printf("flink: %d checkpoints completed in %.1f s since ready (%.1f a second)%n",
                    last - firstCheckpoint, seconds, (last - firstCheckpoint) / seconds);
        }
        try {
            job.cancel().get(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            System.err.printf("flink: cancel acknowledged after %d ms%n", (System.nanoTime() - started) / 1_000_000);
            job.getJobExecutionResult().handle((r, e) -> null).get(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            System.err.printf("flink: job ended after %d ms%n", (System.nanoTime() - started) / 1_000_000);
        } catch (Exception e) {
            System.err.println("flink: stopping the job: " + e);
        }
    }

    static Configuration configuration(Settings settings, int parallelism, long intervalMs, Path checkpoints,
            Optional<Path> resume, boolean onCluster) {
        Configuration conf = new Configuration();
        conf.set(CoreOptions.DEFAULT_PARALLELISM, parallelism);
        // The MiniCluster's REST endpoint (random port): this host only.
        conf.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
        conf.set(StateBackendOptions.STATE_BACKEND, "hashmap");
        conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpoints.toUri().toString());
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofMillis(intervalMs));
        conf.set(CheckpointingOptions.CHECKPOINTING_CONSISTENCY_MODE,
                settings.exactlyOnce() ? CheckpointingMode.EXACTLY_ONCE : CheckpointingMode.AT_LEAST_ONCE);
        conf.set(CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
                ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        conf.set(CheckpointingOptions.MAX_RETAINED_CHECKPOINTS, 1);
        // Records pass between chained operators by reference; the functions keep
        // none (the window operator keeps its own accumulators, not the events).
        conf.set(PipelineOptions.OBJECT_REUSE, true);
        // A partly filled network buffer is sent after at most this long. Only a
        // job with a network exchange (windowed-lowcard's keyBy) has one, and
        // watermarks travel in the same buffers: at Flink's default of 100 ms a
        // window fired 0-100 ms late (pane p50 40-70 ms after the closing
        // record, against 12 ms at 1 ms, for the same CPU at 2,000 records/s).
        // Flink's docs advise against 0 (a flush after every record).
        conf.set(ExecutionOptions.BUFFER_TIMEOUT, NETWORK_BUFFER_TIMEOUT);
        // A few in-process restarts (Flink's own recovery), then the job and the
        // process fail. On a session cluster, a TaskManager's loss leaves the job
        // short of slots until the TaskManager is back: a restart a second for
        // up to a minute, as long as a TaskManager takes to return.
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, onCluster ? 60 : 3);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofSeconds(1));
        resume.ifPresent(path -> {
            conf.set(StateRecoveryOptions.SAVEPOINT_PATH, path.toUri().toString());
            conf.set(StateRecoveryOptions.RESTORE_MODE, RecoveryClaimMode.CLAIM);
        });
        return conf;
    }

    /**
     * Adds the workload's job to the environment: the Kafka source, the
     * workload's operators, the Kafka sink. Returns the source, whose client
     * configuration the app reports.
     */
    static KafkaSource<?> pipeline(StreamExecutionEnvironment env, Settings settings, KafkaSink<byte[]> sink) {
        DataStream<byte[]> output;
        KafkaSource<?> read;
        switch (settings.workload()) {
            case STATELESS -> {
                KafkaSource<byte[]> source = source(settings, VALUE_BYTES);
                read = source;
                output = env.fromSource(source, WatermarkStrategy.noWatermarks(), "kafka-input")
                        .uid("kafka-input")
                        .flatMap(new FilterEnrich())
                        .returns(PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO)
                        .name("filter-enrich")
                        .uid("filter-enrich");
            }
            case PASSTHROUGH -> {
                // The value's bytes, undecoded, straight from the source's
                // deserializer to the sink's serializer (chained: one task).
                KafkaSource<byte[]> source = source(settings, VALUE_BYTES);
                read = source;
                output = env.fromSource(source, WatermarkStrategy.noWatermarks(), "kafka-input")
                        .uid("kafka-input");
            }
            case WINDOWED_LOWCARD -> {
                KafkaSource<WindowedLowcard.Event> source = source(settings,
                        KafkaRecordDeserializationSchema.valueOnly(new WindowedLowcard.EventSchema()));
                read = source;
                // The watermark strategy on the source itself: the watermark is
                // made where the records are read.
                output = WindowedLowcard.panes(env.fromSource(source, WindowedLowcard.watermarks(), "kafka-input")
                        .uid("kafka-input"));
            }
            default -> throw new IllegalStateException("flink: no job for " + settings.workload());
        }
        output.sinkTo(sink)
                .name("kafka-output")
                .uid("kafka-output");
        return read;
    }

    /** Each record's value as it is on the wire. */
    private static final KafkaRecordDeserializationSchema<byte[]> VALUE_BYTES =
            KafkaRecordDeserializationSchema.valueOnly(ByteArrayDeserializer.class);

    static <T> KafkaSource<T> source(Settings settings, KafkaRecordDeserializationSchema<T> deserializer) {
        ClientProfile client = settings.client();
        Properties consumer = new Properties();
        // The suite's client profile, under the Java client's names.
        consumer.setProperty("fetch.min.bytes", Integer.toString(client.fetchMinBytes()));
        consumer.setProperty("fetch.max.wait.ms", Integer.toString(client.fetchMaxWaitMs()));
        consumer.setProperty("max.partition.fetch.bytes", Integer.toString(client.maxPartitionFetchBytes()));
        consumer.setProperty("isolation.level", "read_committed");
        consumer.setProperty("commit.offsets.on.checkpoint", "true");
        return KafkaSource.<T>builder()
                .setBootstrapServers(settings.bootstrap())
                .setTopics(settings.inputTopic())
                .setGroupId(settings.groupId())
                .setClientIdPrefix(settings.groupId())
                // The group's committed offsets when restarted without a checkpoint, else the earliest.
                .setStartingOffsets(OffsetsInitializer.committedOffsets(OffsetResetStrategy.EARLIEST))
                .setDeserializer(deserializer)
                .setProperties(consumer)
                .build();
    }

    static KafkaSink<byte[]> sink(Settings settings, TransactionNamingStrategy naming) {
        ClientProfile client = settings.client();
        boolean idempotence = client.enableIdempotence();
        if (settings.exactlyOnce() && !idempotence) {
            // The client refuses a transactional.id without idempotence.
            System.err.println("flink: enable.idempotence false does not apply to the exactly-once sink,"
                    + " whose transactional producer is always idempotent");
            idempotence = true;
        }
        KafkaSinkBuilder<byte[]> builder = KafkaSink.<byte[]>builder()
                .setBootstrapServers(settings.bootstrap())
                .setRecordSerializer(KafkaRecordSerializationSchema.<byte[]>builder()
                        .setTopic(settings.outputTopic())
                        .setValueSerializationSchema(new PassThrough())
                        .build())
                // The suite's client profile, under the Java client's names.
                .setProperty("acks", client.acks())
                .setProperty("enable.idempotence", Boolean.toString(idempotence))
                .setProperty("linger.ms", Long.toString(client.lingerMs()))
                .setProperty("compression.type", client.compression());
        if (settings.exactlyOnce()) {
            builder.setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
                    .setTransactionalIdPrefix(settings.transactionalId())
                    // POOLING (settings.transaction_naming) reuses a small pool of
                    // transactional ids; INCREMENTING names a new one per
                    // checkpoint (100 a second at a 10 ms interval).
                    .setTransactionNamingStrategy(naming)
                    .setProperty("transaction.timeout.ms", TRANSACTION_TIMEOUT_MS)
                    // A pooled id is reused right after its commit; while the broker
                    // still writes that commit's markers, InitProducerId answers
                    // CONCURRENT_TRANSACTIONS and the task waits one retry backoff
                    // (the client's default is 100 ms, growing to 1 s) before it can
                    // go on. The suite's rule for every exactly-once line: both set to
                    // BENCH_TRANSACTION_RETRY_BACKOFF_MS, a constant wait.
                    .setProperty("retry.backoff.ms", Long.toString(client.transactionRetryBackoffMs()))
                    .setProperty("retry.backoff.max.ms", Long.toString(client.transactionRetryBackoffMs()));
        } else {
            builder.setDeliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE);
        }
        return builder.build();
    }

    /**
     * The client profile as the connector hands it to its clients: the
     * Properties the built KafkaSource and KafkaSink create their consumers
     * and producers from (exposed through their lineage facets), parsed and
     * validated the way KafkaConsumer and KafkaProducer do; the checkpoint
     * interval as configured (the commit interval, raised to Flink's 10 ms
     * minimum).
     */
    static String effectiveClientConfig(KafkaSource<?> source, KafkaSink<byte[]> sink, Settings settings,
            TransactionNamingStrategy naming, long checkpointIntervalMs) {
        Properties consumer = clientProperties(source.getLineageVertex(), "KafkaSource");
        Properties producer = clientProperties(sink.getLineageVertex(), "KafkaSink");
        if (settings.exactlyOnce()) {
            // The sink gives each producer a transactional.id of its own.
            producer.setProperty(ProducerConfig.TRANSACTIONAL_ID_CONFIG, settings.transactionalId() + "-check");
        }
        return ClientProfile.effectiveJson(PRODUCT, new ConsumerConfig(consumer), new ProducerConfig(producer),
                checkpointIntervalMs, settings.exactlyOnce(), Map.of("transaction_naming", TransactionNaming.name(naming)));
    }

    private static Properties clientProperties(LineageVertex vertex, String what) {
        for (LineageDataset dataset : vertex.datasets()) {
            if (dataset.facets().get(DefaultKafkaDatasetFacet.KAFKA_FACET_NAME) instanceof KafkaDatasetFacet kafka) {
                Properties copy = new Properties();
                copy.putAll(kafka.getProperties());
                return copy;
            }
        }
        throw new IllegalStateException("flink: the " + what + " exposes no Kafka properties");
    }

    /** Every workload's output is already the record's value (a named class: the
     *  connector's lineage code cannot infer a lambda's types). */
    static final class PassThrough implements SerializationSchema<byte[]> {
        @Override
        public byte[] serialize(byte[] value) {
            return value;
        }
    }

    /** Filter `region = eu-*` and derive the SLA fields (see {@link Stateless}). */
    static final class FilterEnrich implements FlatMapFunction<byte[], byte[]> {
        @Override
        public void flatMap(byte[] value, Collector<byte[]> out) {
            if (value == null) {
                return;
            }
            byte[] output = Stateless.transform(value);
            if (output != null) {
                out.collect(output);
            }
        }
    }

    /** Checkpoints of this consumer group, kept across restarts with the same environment. */
    static Path checkpointRoot(Settings settings) throws IOException {
        String name = settings.groupId().replaceAll("[^A-Za-z0-9._-]", "_");
        Path root = Path.of(System.getProperty("java.io.tmpdir"), "streamsuite-flink", name);
        Files.createDirectories(root);
        removeStale(root.getParent());
        return root;
    }

    /** The newest completed checkpoint of any earlier job of this group. */
    static Optional<Path> newestCheckpoint(Path root) throws IOException {
        try (Stream<Path> jobs = Files.list(root)) {
            return jobs.flatMap(FlinkApp::checkpointsOf)
                    .filter(chk -> Files.isRegularFile(chk.resolve("_metadata")))
                    .max(Comparator.comparing(chk -> modified(chk.resolve("_metadata"))));
        }
    }

    private static boolean hasCompletedCheckpoint(Path jobDir) {
        return Files.isDirectory(jobDir)
                && checkpointsOf(jobDir).anyMatch(chk -> Files.isRegularFile(chk.resolve("_metadata")));
    }

    /** The id of the newest completed checkpoint in a job's folder, or -1. */
    private static long newestCheckpointId(Path jobDir) {
        return checkpointsOf(jobDir)
                .filter(chk -> Files.isRegularFile(chk.resolve("_metadata")))
                .mapToLong(chk -> Long.parseLong(chk.getFileName().toString().substring(4)))
                .max()
                .orElse(-1);
    }

    private static Stream<Path> checkpointsOf(Path jobDir) {
        try (Stream<Path> entries = Files.list(jobDir)) {
            return entries.filter(p -> p.getFileName().toString().startsWith("chk-")).toList().stream();
        } catch (IOException e) {
            return Stream.empty();
        }
    }

    private static FileTime modified(Path path) {
        try {
            return Files.getLastModifiedTime(path);
        } catch (IOException e) {
            return FileTime.fromMillis(0);
        }
    }

    /** Once the new job has a checkpoint of its own, the earlier jobs' are not needed. */
    private static void removeOtherJobs(Path root, Path keep) {
        try (Stream<Path> jobs = Files.list(root)) {
            jobs.filter(job -> !job.equals(keep)).forEach(FlinkApp::deleteTree);
        } catch (IOException e) {
            System.err.println("flink: cleaning " + root + ": " + e);
        }
    }

    /** Checkpoint folders of runs untouched for a day: left by runs that ended long ago. */
    private static void removeStale(Path base) {
        long cutoff = System.currentTimeMillis() - Duration.ofDays(1).toMillis();
        try (Stream<Path> groups = Files.list(base)) {
            groups.filter(g -> modified(g).toMillis() < cutoff).forEach(FlinkApp::deleteTree);
        } catch (IOException e) {
            System.err.println("flink: cleaning " + base + ": " + e);
        }
    }

    private static void deleteTree(Path path) {
        try (Stream<Path> walk = Files.walk(path)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException | UncheckedIOException e) {
            System.err.println("flink: removing " + path + ": " + e);
        }
    }
}
