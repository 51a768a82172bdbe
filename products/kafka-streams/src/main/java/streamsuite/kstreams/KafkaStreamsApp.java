package streamsuite.kstreams;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;
import streamsuite.common.BenchEnv;
import streamsuite.common.ClientProfile;
import streamsuite.common.Settings;
import streamsuite.common.Stateless;
import streamsuite.common.StaticMembership;
import streamsuite.common.Workload;

/**
 * streamsuite's Kafka Streams product: one topology per workload (printed to
 * standard error at start: check "Sub-topologies" there). stateless (input
 * stream, filter-and-enrich flatMapValues, output stream) and passthrough
 * (input stream to output stream) have no state store and Kafka Streams
 * creates no internal topic for them; windowed-lowcard re-keys through a
 * repartition topic and keeps its windows in a changelogged store, RocksDB or
 * in memory ({@link WindowedLowcard}, {@link WindowStoreKind}).
 *
 * <p>at-least-once commits offsets every commit interval after flushing the
 * producer; exactly_once_v2 wraps each commit interval's outputs and input
 * offsets in one Kafka transaction.
 */
public final class KafkaStreamsApp {
    /** The name the app's messages start with. */
    static final String PRODUCT = "kafka-streams";
    /** The line product.yaml's readiness check looks for. */
    static final String READY_LINE = "kafka-streams ready";
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(5);

    private KafkaStreamsApp() {}

    public static void main(String[] args) throws Exception {
        Settings settings;
        StaticMembership membership;
        WindowStoreKind windowStore;
        try {
            settings = Settings.fromEnv(PRODUCT, EnumSet.allOf(Workload.class));
            membership = StaticMembership.from(BenchEnv.system(PRODUCT));
            windowStore = WindowStoreKind.fromEnv(BenchEnv.system(PRODUCT), settings.workload());
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        Path stateDir = Files.createTempDirectory("streamsuite-kafka-streams-");
        StreamsConfig config;
        String effective;
        try {
            config = new StreamsConfig(properties(settings, membership, stateDir));
            effective = effectiveClientConfig(config, settings, windowStore);
        } catch (ConfigException e) {
            // A profile the Java client refuses (acks 1 or 0 with idempotence, say).
            System.err.println("kafka-streams: the client refuses this configuration: " + e.getMessage());
            deleteQuietly(stateDir);
            System.exit(2);
            return;
        }
        Topology topology = topology(settings, windowStore);
        System.err.println("kafka-streams: " + topology.describe());
        KafkaStreams streams = new KafkaStreams(topology, config);
        System.out.println(ClientProfile.EFFECTIVE_PREFIX + effective);
        System.out.flush();

        CountDownLatch stopped = new CountDownLatch(1);
        AtomicBoolean failed = new AtomicBoolean(false);
        AtomicBoolean ready = new AtomicBoolean(false);
        streams.setStateListener((now, before) -> {
            System.err.println("kafka-streams: state " + before + " -> " + now);
            if (now == KafkaStreams.State.RUNNING && ready.compareAndSet(false, true)) {
                System.out.println(READY_LINE);
                System.out.flush();
            }
            if (now == KafkaStreams.State.ERROR) {
                failed.set(true);
            }
            if (now == KafkaStreams.State.ERROR || now == KafkaStreams.State.NOT_RUNNING) {
                stopped.countDown();
            }
        });
        streams.setUncaughtExceptionHandler(e -> {
            System.err.println("kafka-streams: a stream thread failed: " + e);
            e.printStackTrace();
            failed.set(true);
            return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            // Commits (at-least-once) or ends the open transaction, then leaves
            // the group: a static member is removed from it (Kafka Streams
            // asks the coordinator to, by its group.instance.id), so the next
            // start joins an empty group. A killed process leaves nothing: its
            // restart takes the static member's place under the same id.
            streams.close(new KafkaStreams.CloseOptions().timeout(STOP_TIMEOUT).leaveGroup(true));
            deleteQuietly(stateDir);
        }, "streamsuite-stop"));

        streams.start();
        stopped.await();
        if (failed.get()) {
            streams.close(STOP_TIMEOUT);
            Runtime.getRuntime().halt(1);
        }
    }

    static Topology topology(Settings settings, WindowStoreKind windowStore) {
        StreamsBuilder builder = new StreamsBuilder();
        switch (settings.workload()) {
            case STATELESS -> builder
                    .stream(settings.inputTopic(), Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
                    .flatMapValues(value -> {
                        byte[] output = value == null ? null : Stateless.transform(value);
                        return output == null ? Collections.<byte[]>emptyList() : List.of(output);
                    })
                    .to(settings.outputTopic(), Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));
            // The value's bytes, undecoded, from the input topic to the output
            // topic (no key, as the input has none).
            case PASSTHROUGH -> builder
                    .stream(settings.inputTopic(), Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
                    .to(settings.outputTopic(), Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));
            case WINDOWED_LOWCARD -> WindowedLowcard.topology(builder, settings, windowStore);
            default -> throw new IllegalStateException("kafka-streams: no topology for " + settings.workload());
        }
        return builder.build();
    }

    static Properties properties(Settings settings, StaticMembership membership, Path stateDir) {
        Properties p = new Properties();
        // application.id is the consumer group: the suite reads its committed offsets.
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, settings.groupId());
        p.put(StreamsConfig.CLIENT_ID_CONFIG, settings.groupId());
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrap());
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG,
                settings.exactlyOnce() ? StreamsConfig.EXACTLY_ONCE_V2 : StreamsConfig.AT_LEAST_ONCE);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, Long.toString(settings.commitIntervalMs()));
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, Integer.toString(settings.parallelism()));
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());

        // The suite's client profile, under the Java client's names, for the
        // main consumer (the input topic and, for windowed-lowcard, the
        // repartition topic), the restore consumer (changelogs, read back on a
        // restart), the global consumer (unused) and the producer (output,
        // repartition and changelog topics).
        ClientProfile client = settings.client();
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.FETCH_MIN_BYTES_CONFIG), Integer.toString(client.fetchMinBytes()));
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG), Integer.toString(client.fetchMaxWaitMs()));
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG),
                Integer.toString(client.maxPartitionFetchBytes()));
        p.put(StreamsConfig.producerPrefix(ProducerConfig.ACKS_CONFIG), client.acks());
        p.put(StreamsConfig.producerPrefix(ProducerConfig.LINGER_MS_CONFIG), Long.toString(client.lingerMs()));
        p.put(StreamsConfig.producerPrefix(ProducerConfig.COMPRESSION_TYPE_CONFIG), client.compression());
        // Static membership, on the main consumer only (the one that joins the
        // group; the restore consumer assigns its changelog partitions itself):
        // a process restarted after a kill rejoins under the same
        // group.instance.id and takes its partition back at once, instead of
        // waiting for the dead member's session to time out. Kafka Streams
        // appends each stream thread's index ("-1", "-2", ...) to the id, so
        // every thread's consumer has one of its own.
        p.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG), membership.groupInstanceId());
        p.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG),
                Integer.toString(membership.sessionTimeoutMs()));
        if (settings.exactlyOnce()) {
            // exactly_once_v2 sets read_committed and idempotence itself (and
            // replaces a given value with a warning): a transactional producer
            // is always idempotent.
            if (!client.enableIdempotence()) {
                System.err.println("kafka-streams: enable.idempotence false does not apply to exactly_once_v2,"
                        + " whose transactional producer is always idempotent");
            }
            // The transactional producer's retry backoff (the suite's rule for
            // every exactly-once line): a constant wait, as retry.backoff.ms
            // equals retry.backoff.max.ms.
            String backoff = Long.toString(client.transactionRetryBackoffMs());
            p.put(StreamsConfig.producerPrefix(ProducerConfig.RETRY_BACKOFF_MS_CONFIG), backoff);
            p.put(StreamsConfig.producerPrefix(ProducerConfig.RETRY_BACKOFF_MAX_MS_CONFIG), backoff);
            // The suite's transaction timeout for every exactly-once line
            // (Kafka Streams' own default under exactly-once is the same
            // 10 s): a transaction a killed process left open holds
            // read_committed readers until the broker aborts it.
            p.put(StreamsConfig.producerPrefix(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG),
                    Long.toString(client.transactionTimeoutMs()));
        } else {
            p.put(StreamsConfig.consumerPrefix(ConsumerConfig.ISOLATION_LEVEL_CONFIG), "read_committed");
            p.put(StreamsConfig.producerPrefix(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG),
                    Boolean.toString(client.enableIdempotence()));
        }
        return p;
    }

    /**
     * The client profile as Kafka Streams hands it to its clients: the main
     * consumer's and the producer's configurations from {@link StreamsConfig},
     * parsed and validated the way KafkaConsumer and KafkaProducer do.
     */
    static String effectiveClientConfig(StreamsConfig config, Settings settings, WindowStoreKind windowStore) {
        Map<String, Object> consumer = new HashMap<>(config.getMainConsumerConfigs(
                settings.groupId(), settings.groupId() + "-StreamThread-1-consumer", 1));
        System.err.println("kafka-streams: static member: stream thread 1's main consumer joins as group.instance.id "
                + consumer.get(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG) + ", session.timeout.ms "
                + consumer.get(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG));
        // Kafka Streams passes its deserializer instances to the consumer's constructor.
        consumer.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        consumer.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        Map<String, Object> producer = new HashMap<>(config.getProducerConfigs(settings.groupId() + "-StreamThread-1-producer"));
        producer.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        producer.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        if (settings.exactlyOnce()) {
            // Each stream thread's producer gets a transactional.id of its own.
            producer.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, settings.groupId() + "-check");
        }
        return ClientProfile.effectiveJson(PRODUCT, new ConsumerConfig(consumer), new ProducerConfig(producer),
                config.getLong(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG), settings.exactlyOnce(),
                Map.of(WindowStoreKind.KEY, windowStore.spelling()));
    }

    private static void deleteQuietly(Path dir) {
        try (var walk = Files.walk(dir)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (Exception e) {
            // A temp folder left behind is harmless.
        }
    }
}
