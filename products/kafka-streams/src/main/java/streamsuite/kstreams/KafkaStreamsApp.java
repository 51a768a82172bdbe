package streamsuite.kstreams;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;

/**
 * streamsuite's Kafka Streams product: input stream, filter-and-enrich
 * (flatMapValues), output stream. Stateless, so the topology has no state
 * store and Kafka Streams creates no internal topic (the topology is printed
 * to standard error at start: check "Sub-topologies" there).
 *
 * <p>at-least-once commits offsets every commit interval after flushing the
 * producer; exactly_once_v2 wraps each commit interval's outputs and input
 * offsets in one Kafka transaction.
 */
public final class KafkaStreamsApp {
    /** The line product.yaml's readiness check looks for. */
    static final String READY_LINE = "kafka-streams ready";
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(5);

    private KafkaStreamsApp() {}

    public static void main(String[] args) throws Exception {
        Settings settings = Settings.fromEnv();
        if (!settings.workload().equals("stateless")) {
            throw new IllegalArgumentException(
                    "kafka-streams: workload `" + settings.workload() + "` is not implemented");
        }
        Path stateDir = Files.createTempDirectory("streamsuite-kafka-streams-");
        Topology topology = topology(settings);
        System.err.println("kafka-streams: " + topology.describe());
        KafkaStreams streams = new KafkaStreams(topology, properties(settings, stateDir));

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
            // the group so a restart is assigned the partition at once.
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

    static Topology topology(Settings settings) {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(settings.inputTopic(), Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
                .flatMapValues(value -> {
                    byte[] output = value == null ? null : Stateless.transform(value);
                    return output == null ? Collections.<byte[]>emptyList() : List.of(output);
                })
                .to(settings.outputTopic(), Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));
        return builder.build();
    }

    static Properties properties(Settings settings, Path stateDir) {
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

        // Consumer: the in-house pipeline's fetch settings; they mean the same on the Java client.
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.FETCH_MIN_BYTES_CONFIG), "65536");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG), "10");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG), "52428800");
        // Producer: like rustpipe. Kafka Streams' own default linger.ms is 100.
        p.put(StreamsConfig.producerPrefix(ProducerConfig.ACKS_CONFIG), "all");
        if (!settings.exactlyOnce()) {
            // exactly_once_v2 sets both itself (and warns when they are given).
            p.put(StreamsConfig.consumerPrefix(ConsumerConfig.ISOLATION_LEVEL_CONFIG), "read_committed");
            p.put(StreamsConfig.producerPrefix(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG), "true");
        }
        p.put(StreamsConfig.producerPrefix(ProducerConfig.LINGER_MS_CONFIG), "5");
        p.put(StreamsConfig.producerPrefix(ProducerConfig.COMPRESSION_TYPE_CONFIG), "lz4");
        return p;
    }

    private static void deleteQuietly(Path dir) {
        try (var walk = Files.walk(dir)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (Exception e) {
            // A temp folder left behind is harmless.
        }
    }
}
