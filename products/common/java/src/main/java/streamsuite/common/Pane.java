package streamsuite.common;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.databind.ObjectWriter;
import java.io.IOException;

/**
 * One output record of the windowed-lowcard workload: the pane of one
 * window and key, with the count, sum and maximum of {@code latency_ms},
 * fields in the contract's order.
 */
@JsonPropertyOrder({"window_start_us", "window_end_us", "region", "service", "count",
        "sum_latency_ms", "max_latency_ms"})
public final class Pane {
    private static final ObjectWriter WRITER = Json.mapper().build().writerFor(Pane.class);

    @JsonProperty("window_start_us") public final long windowStartUs;
    @JsonProperty("window_end_us") public final long windowEndUs;
    @JsonProperty("region") public final String region;
    @JsonProperty("service") public final String service;
    @JsonProperty("count") public final long count;
    @JsonProperty("sum_latency_ms") public final long sumLatencyMs;
    @JsonProperty("max_latency_ms") public final long maxLatencyMs;

    /** The pane of the window [windowStartMs, windowEndMs) and the key (region, service). */
    public Pane(long windowStartMs, long windowEndMs, String region, String service, long count,
            long sumLatencyMs, long maxLatencyMs) {
        this.windowStartUs = windowStartMs * 1000L;
        this.windowEndUs = windowEndMs * 1000L;
        this.region = region;
        this.service = service;
        this.count = count;
        this.sumLatencyMs = sumLatencyMs;
        this.maxLatencyMs = maxLatencyMs;
    }

    /** The record's value: the pane's JSON, the window's bounds in µs. */
    public byte[] encode() {
        try {
            return WRITER.writeValueAsBytes(this);
        } catch (IOException e) {
            throw new IllegalStateException("encoding a pane", e);
        }
    }
}
