package streamsuite.kstreams;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.ObjectReader;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Suppressed;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.processor.TimestampExtractor;
import streamsuite.common.Json;
import streamsuite.common.Pane;
import streamsuite.common.Settings;

/**
 * The windowed-lowcard workload: tumbling 1 s event-time windows over
 * {@code ts_us}, keyed by (region, service), one final pane per window and key
 * with the count, sum and maximum of {@code latency_ms}.
 *
 * <p>The Kafka Streams DSL's own windowing. The source decodes each event (a
 * projection of 5 of its 19 fields) and its timestamp extractor makes
 * {@code ts_us} (in ms) the record's timestamp, so stream time is event time.
 * The re-key to "region|service" goes through a repartition topic (how Kafka
 * Streams co-partitions a grouping by a new key): the window aggregation reads
 * it as a second sub-topology, with the event time carried as the records'
 * timestamps. Each update reaches the suppression buffer at once (the
 * aggregate's record cache is off), and the buffer releases a window's panes
 * when stream time reaches the window's end.
 *
 * <p>Suppression rather than {@code emitStrategy(EmitStrategy.onWindowClose())}:
 * that strategy looks for closed windows at most once per second of wall-clock
 * time, an interval only a private internal config changes, so its panes come
 * up to 1 s after the window closes.
 */
public final class WindowedLowcard {
    /** The window's length, in event time. */
    static final Duration WINDOW = Duration.ofSeconds(1);
    /** Named operators: their internal topics are {application.id}-{name}-repartition / -changelog. */
    static final String REPARTITION = "by-region-service";
    static final String STORE = "panes";
    static final String SUPPRESSION = "final-panes";

    private static final ObjectReader READER = Json.mapper().build().readerFor(Event.class);

    private WindowedLowcard() {}

    /**
     * input (decoded, event-time stamped) → re-key to "region|service" →
     * repartition topic → 1 s tumbling windows, count/sum/max → suppression
     * until each window closes → the pane's JSON → output.
     */
    static void topology(StreamsBuilder builder, Settings settings, WindowStoreKind store) {
        builder.stream(settings.inputTopic(),
                        Consumed.with(Serdes.ByteArray(), EVENTS)
                                .withTimestampExtractor(new EventTime())
                                .withName("kafka-input"))
                // Only the key, seq and latency travel through the repartition topic.
                .map((key, event) -> KeyValue.pair(event.region + "|" + event.service,
                                new Reading(event.seq, event.latencyMs)),
                        Named.as("key-by-region-service"))
                .groupByKey(Grouped.with(REPARTITION, Serdes.String(), READINGS))
                .windowedBy(TimeWindows.ofSizeWithNoGrace(WINDOW))
                .aggregate(Figures::empty, (key, reading, figures) -> figures.add(reading),
                        Named.as("count-sum-max"),
                        store.<Figures>materialized(STORE, WINDOW)
                                .withKeySerde(Serdes.String())
                                .withValueSerde(FIGURES)
                                // With the record cache on, updates reach the
                                // suppression buffer only when the cache is
                                // flushed, at each commit: a window's panes would
                                // wait for the next commit (up to 1 s on the
                                // at-least-once line) instead of the record that
                                // closes the window.
                                .withCachingDisabled())
                // Final panes only: held until stream time (the highest record
                // timestamp seen) reaches the window's end, then emitted once.
                .suppress(Suppressed.untilWindowCloses(Suppressed.BufferConfig.unbounded())
                        .withName(SUPPRESSION))
                .toStream(Named.as("to-stream"))
                .map((window, figures) -> KeyValue.pair(window.key(), pane(window, figures)), Named.as("pane-json"))
                .to(settings.outputTopic(), Produced.with(Serdes.String(), Serdes.ByteArray()).withName("kafka-output"));
    }

    /** The input fields the workload reads (a projection of the 19). */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public static final class Event {
        @JsonProperty("seq") public long seq = -1;
        @JsonProperty("ts_us") public long tsUs = -1;
        @JsonProperty("region") public String region;
        @JsonProperty("service") public String service;
        @JsonProperty("latency_ms") public long latencyMs = -1;
    }

    /** What the window aggregation needs of one event: its seq and its latency. */
    record Reading(long seq, long latencyMs) {}

    /**
     * One window's running figures for one key, kept in the window store, with
     * the highest seq counted.
     *
     * <p>The seq makes the count idempotent on the at-least-once line. There
     * the store's changelog is written as the store changes (no record cache),
     * ahead of the committed offsets; after a crash Kafka Streams restores the
     * store from it, then processes again the records after the committed
     * offsets, and without the seq would count them twice: a wrong pane, not a
     * duplicate one (seen after a SIGKILL). Records reach a key in seq order
     * (one input partition, one repartition partition), so a seq at or below
     * the highest counted is one the figures already hold. Under
     * exactly_once_v2 store, output and offsets commit together and no record
     * is seen twice.
     */
    record Figures(long count, long sum, long max, long lastSeq) {
        static Figures empty() {
            return new Figures(0, 0, Long.MIN_VALUE, -1);
        }

        /**
         * The figures with the reading counted, or unchanged for one already
         * counted (still returned, so the suppression buffer gets the current
         * figures, which it may have restored from an older commit).
         */
        Figures add(Reading reading) {
            if (reading.seq() <= lastSeq) {
                return this;
            }
            return new Figures(count + 1, sum + reading.latencyMs(), Math.max(max, reading.latencyMs()), reading.seq());
        }
    }

    /** The pane's JSON: the window's bounds in µs, the key split back into region and service. */
    static byte[] pane(Windowed<String> window, Figures figures) {
        String key = window.key();
        int bar = key.indexOf('|');
        return new Pane(window.window().start(), window.window().end(), key.substring(0, bar),
                key.substring(bar + 1), figures.count(), figures.sum(), figures.max()).encode();
    }

    /** Event time: {@code ts_us} in ms, read from the event the source has already decoded. */
    static final class EventTime implements TimestampExtractor {
        @Override
        public long extract(ConsumerRecord<Object, Object> record, long partitionTime) {
            return Math.floorDiv(((Event) record.value()).tsUs, 1000L);
        }
    }

    /** The source's value serde: one decoded event per record (only ever read). */
    static final Serde<Event> EVENTS = Serdes.serdeFrom(
            (Serializer<Event>) (topic, event) -> {
                throw new UnsupportedOperationException("events are read, never written");
            },
            (Deserializer<Event>) (topic, value) -> {
                Event event;
                try {
                    event = READER.readValue(value);
                } catch (IOException e) {
                    throw new IllegalArgumentException("an input record is not an event: " + e.getMessage(), e);
                }
                if (event.seq < 0 || event.tsUs < 0 || event.region == null || event.service == null || event.latencyMs < 0) {
                    throw new IllegalArgumentException("an input record lacks a field the workload reads");
                }
                return event;
            });

    /** The repartition topic's value: seq and latency as two big-endian longs. */
    static final Serde<Reading> READINGS = Serdes.serdeFrom(
            (Serializer<Reading>) (topic, reading) -> reading == null ? null
                    : ByteBuffer.allocate(16).putLong(reading.seq()).putLong(reading.latencyMs()).array(),
            (Deserializer<Reading>) (topic, bytes) -> {
                if (bytes == null) {
                    return null;
                }
                ByteBuffer buffer = ByteBuffer.wrap(bytes);
                return new Reading(buffer.getLong(), buffer.getLong());
            });

    /** The window store's value: count, sum, max and the last seq as four big-endian longs. */
    static final Serde<Figures> FIGURES = Serdes.serdeFrom(
            (Serializer<Figures>) (topic, figures) -> figures == null ? null
                    : ByteBuffer.allocate(32).putLong(figures.count()).putLong(figures.sum())
                            .putLong(figures.max()).putLong(figures.lastSeq()).array(),
            (Deserializer<Figures>) (topic, bytes) -> {
                if (bytes == null) {
                    return null;
                }
                ByteBuffer buffer = ByteBuffer.wrap(bytes);
                return new Figures(buffer.getLong(), buffer.getLong(), buffer.getLong(), buffer.getLong());
            });
}
