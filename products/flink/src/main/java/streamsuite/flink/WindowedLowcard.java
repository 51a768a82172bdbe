package streamsuite.flink;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.ObjectReader;
import java.io.IOException;
import java.time.Duration;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.serialization.AbstractDeserializationSchema;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;
import streamsuite.common.Json;
import streamsuite.common.Pane;

/**
 * The windowed-lowcard workload: tumbling 1 s event-time windows over
 * {@code ts_us}, keyed by (region, service), one final pane per window and key
 * with the count, sum and maximum of {@code latency_ms}.
 *
 * <p>Flink's own windowing: the source decodes each event (a projection of 4
 * of its 19 fields) and stamps it with {@code ts_us} in ms; keyBy hashes the
 * events to the window operator (a network exchange, unlike the chained
 * stateless job); TumblingEventTimeWindows with an incremental aggregate (one
 * accumulator per window and key, no event kept) fires each window once, when
 * the watermark passes its end; the pane is encoded and handed to the Kafka sink
 * in the same task.
 */
public final class WindowedLowcard {
    /** The window's length, in event time. */
    static final Duration WINDOW = Duration.ofSeconds(1);

    private static final ObjectReader READER = Json.mapper().build().readerFor(Input.class);

    private WindowedLowcard() {}

    /**
     * The windows between the source's events and the sink's values: keyBy,
     * tumbling windows, the pane's encoding.
     */
    static DataStream<byte[]> panes(DataStream<Event> events) {
        return events
                .keyBy(new RegionService())
                .window(TumblingEventTimeWindows.of(WINDOW))
                .aggregate(new CountSumMax(), new ToPane())
                .name("windows")
                .uid("windows")
                .returns(PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO);
    }

    /**
     * Event time is {@code ts_us} in ms, and the watermark advances with the
     * records themselves ({@link WatermarksFromRecords}), never on the periodic
     * auto-watermark timer (every 200 ms).
     */
    static WatermarkStrategy<Event> watermarks() {
        return WatermarkStrategy.<Event>forGenerator(context -> new WatermarksFromRecords())
                .withTimestampAssigner((event, recordTimestamp) -> Math.floorDiv(event.tsUs, 1000L));
    }

    /** The input fields the workload reads (a projection of the 19). */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public static final class Input {
        @JsonProperty("ts_us") public long tsUs = -1;
        @JsonProperty("region") public String region;
        @JsonProperty("service") public String service;
        @JsonProperty("latency_ms") public long latencyMs = -1;
    }

    /** One decoded event as it travels to the window operator (a Flink POJO). */
    public static final class Event {
        public long tsUs;
        public String region;
        public String service;
        public long latencyMs;

        public Event() {}
    }

    /** One window's running figures for one key (a Flink POJO, kept in keyed state). */
    public static final class Accumulator {
        public long count;
        public long sum;
        public long max = Long.MIN_VALUE;

        public Accumulator() {}
    }

    /** The source's deserializer: one event per record value. */
    static final class EventSchema extends AbstractDeserializationSchema<Event> {
        @Override
        public Event deserialize(byte[] value) {
            Input in;
            try {
                in = READER.readValue(value);
            } catch (IOException e) {
                throw new IllegalArgumentException("an input record is not an event: " + e.getMessage(), e);
            }
            if (in.tsUs < 0 || in.region == null || in.service == null || in.latencyMs < 0) {
                throw new IllegalArgumentException("an input record lacks a field the workload reads");
            }
            Event event = new Event();
            event.tsUs = in.tsUs;
            event.region = in.region;
            event.service = in.service;
            event.latencyMs = in.latencyMs;
            return event;
        }
    }

    /**
     * A watermark from each record that raises the highest timestamp seen:
     * that timestamp minus 1 ms (monotonous timestamps: the input is in
     * timestamp order on its one partition). Flink fires a window [s, e) once
     * the watermark reaches e - 1, so the first record at or past e closes it,
     * in the same step that reads it. Timestamps are in ms, so this is at most
     * 1000 watermarks a second, whatever the rate; the periodic call adds
     * nothing.
     */
    static final class WatermarksFromRecords implements WatermarkGenerator<Event> {
        private long maxTimestamp = Long.MIN_VALUE;

        @Override
        public void onEvent(Event event, long eventTimestamp, WatermarkOutput output) {
            if (eventTimestamp > maxTimestamp) {
                maxTimestamp = eventTimestamp;
                output.emitWatermark(new Watermark(eventTimestamp - 1));
            }
        }

        @Override
        public void onPeriodicEmit(WatermarkOutput output) {
            // Every watermark is emitted in onEvent.
        }
    }

    /** The window's key: (region, service). */
    static final class RegionService implements KeySelector<Event, Tuple2<String, String>> {
        @Override
        public Tuple2<String, String> getKey(Event event) {
            return Tuple2.of(event.region, event.service);
        }
    }

    /** count, sum and max of latency_ms, one accumulator per window and key. */
    static final class CountSumMax implements AggregateFunction<Event, Accumulator, Accumulator> {
        @Override
        public Accumulator createAccumulator() {
            return new Accumulator();
        }

        @Override
        public Accumulator add(Event event, Accumulator acc) {
            acc.count++;
            acc.sum += event.latencyMs;
            acc.max = Math.max(acc.max, event.latencyMs);
            return acc;
        }

        @Override
        public Accumulator getResult(Accumulator acc) {
            return acc;
        }

        @Override
        public Accumulator merge(Accumulator a, Accumulator b) {
            a.count += b.count;
            a.sum += b.sum;
            a.max = Math.max(a.max, b.max);
            return a;
        }
    }

    /** The fired window's figures as the pane's JSON, with the window's bounds in µs. */
    static final class ToPane extends ProcessWindowFunction<Accumulator, byte[], Tuple2<String, String>, TimeWindow> {
        @Override
        public void process(Tuple2<String, String> key, Context context, Iterable<Accumulator> figures,
                Collector<byte[]> out) {
            Accumulator acc = figures.iterator().next();
            out.collect(new Pane(context.window().getStart(), context.window().getEnd(), key.f0, key.f1,
                    acc.count, acc.sum, acc.max).encode());
        }
    }
}
