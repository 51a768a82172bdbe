package streamsuite.common;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.core.StreamWriteFeature;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;

/**
 * The stateless workload's steps: decode an event, keep it when its region
 * starts with {@code eu-}, encode the output with {@code latency_ratio} and
 * {@code sla_status} derived. The output keeps what verification needs: the
 * input's sequence number and gendata timestamp, unchanged.
 *
 * <p>Decoding is a Jackson databind projection: 6 of the event's 19 fields bind
 * to {@link Event}, the others are skipped by the parser. It burns the run's
 * {@link KnownCost} first, 0 unless a regression of known size was asked for.
 */
public final class Stateless {
    private static final JsonMapper MAPPER = Json.mapper()
            // Shortest round-trip digits for doubles (Schubfach), like the
            // in-house pipeline's serde_json; Java 17's Double.toString is not
            // always shortest.
            .enable(StreamWriteFeature.USE_FAST_DOUBLE_WRITER)
            .build();
    private static final ObjectReader READER = MAPPER.readerFor(Event.class);
    private static final ObjectWriter WRITER = MAPPER.writerFor(Output.class);

    private Stateless() {}

    /** The input fields the workload reads (a projection of the 19). */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public static final class Event {
        @JsonProperty("seq") public long seq = -1;
        @JsonProperty("ts_us") public long tsUs;
        @JsonProperty("region") public String region;
        @JsonProperty("service") public String service;
        @JsonProperty("latency_ms") public long latencyMs;
        @JsonProperty("sla_ms") public long slaMs;
    }

    /** One output record, fields in rustpipe's order. */
    @JsonPropertyOrder({"seq", "ts_us", "region", "service", "latency_ms", "sla_ms",
            "latency_ratio", "sla_status"})
    public static final class Output {
        @JsonProperty("seq") public long seq;
        @JsonProperty("ts_us") public long tsUs;
        @JsonProperty("region") public String region;
        @JsonProperty("service") public String service;
        @JsonProperty("latency_ms") public long latencyMs;
        @JsonProperty("sla_ms") public long slaMs;
        @JsonProperty("latency_ratio") public double latencyRatio;
        @JsonProperty("sla_status") public String slaStatus;
    }

    /**
     * The event in one input value.
     *
     * @throws IllegalArgumentException when the value is not an event, or
     *     lacks a field the workload reads (the job fails)
     */
    public static Event decode(byte[] value) {
        KnownCost.burn(KnownCost.NS_PER_RECORD);
        Event event;
        try {
            event = READER.readValue(value);
        } catch (IOException e) {
            throw new IllegalArgumentException("an input record is not an event: " + e.getMessage(), e);
        }
        if (event.seq < 0 || event.region == null || event.service == null || event.slaMs <= 0) {
            throw new IllegalArgumentException("an input record lacks a field the workload reads");
        }
        return event;
    }

    /** The filter: events of eu-* regions. */
    public static boolean kept(Event event) {
        return event.region.startsWith("eu-");
    }

    /** The output record of a kept event, as JSON bytes. */
    public static byte[] enrich(Event event) {
        Output out = new Output();
        out.seq = event.seq;
        out.tsUs = event.tsUs;
        out.region = event.region;
        out.service = event.service;
        out.latencyMs = event.latencyMs;
        out.slaMs = event.slaMs;
        out.latencyRatio = (double) event.latencyMs / (double) event.slaMs;
        out.slaStatus = out.latencyRatio > 1.0 ? "breach" : "ok";
        try {
            return WRITER.writeValueAsBytes(out);
        } catch (IOException e) {
            throw new IllegalStateException("encoding an output record", e);
        }
    }

    /**
     * The whole workload on one input value: its output record, or null when
     * the filter drops the event.
     *
     * @throws IllegalArgumentException when the value is not an event
     */
    public static byte[] transform(byte[] value) {
        Event event = decode(value);
        return kept(event) ? enrich(event) : null;
    }
}
