package streamsuite.common;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The pane as the suite's windowed-lowcard check reads it. */
class PaneTest {
    @Test
    void aPaneIsTheContractsJsonWithTheBoundsInMicroseconds() {
        Pane pane = new Pane(1_767_225_600_000L, 1_767_225_601_000L, "eu-west", "search", 3, 60, 30);
        assertEquals("{\"window_start_us\":1767225600000000,\"window_end_us\":1767225601000000,"
                        + "\"region\":\"eu-west\",\"service\":\"search\",\"count\":3,"
                        + "\"sum_latency_ms\":60,\"max_latency_ms\":30}",
                new String(pane.encode(), StandardCharsets.UTF_8));
    }
}
