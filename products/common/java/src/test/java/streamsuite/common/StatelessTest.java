package streamsuite.common;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The stateless workload against the suite's own expectation: the fixed cases
 * in products/common/stateless-cases.json, each an event as the generator
 * writes it and the output the suite's verification expects (null where the
 * eu-* filter drops the event).
 */
class StatelessTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** How far latency_ratio may be from the suite's (relative): engines divide in their own way. */
    private static final double RATIO_TOLERANCE = 1e-9;

    private static List<JsonNode> cases() throws IOException {
        String path = System.getProperty("stateless.cases");
        assertNotNull(path, "the system property stateless.cases names the cases file (set in pom.xml)");
        JsonNode root = JSON.readTree(new File(path));
        assertEquals("stateless", root.path("workload").asText(), path);
        List<JsonNode> cases = new ArrayList<>();
        root.path("cases").forEach(cases::add);
        return cases;
    }

    @Test
    void decode_and_enrich_agree_with_the_suites_expected_output() throws IOException {
        int kept = 0;
        int dropped = 0;
        for (JsonNode c : cases()) {
            byte[] input = JSON.writeValueAsBytes(c.get("input"));
            JsonNode expected = c.get("output");
            String name = "case seq " + c.get("input").get("seq");
            byte[] output = Stateless.transform(input);
            if (expected == null || expected.isNull()) {
                assertNull(output, name + ": the eu-* filter drops it");
                dropped++;
                continue;
            }
            assertNotNull(output, name + ": kept");
            kept++;
            JsonNode actual = JSON.readTree(output);
            assertEquals(fields(expected), fields(actual), name + ": the output's fields");
            for (String field : fields(expected)) {
                if (field.equals("latency_ratio")) {
                    double want = expected.get(field).doubleValue();
                    double got = actual.get(field).doubleValue();
                    assertTrue(actual.get(field).isNumber() && Math.abs(got - want) <= RATIO_TOLERANCE * Math.abs(want),
                            name + ": latency_ratio " + got + ", expected " + want);
                } else {
                    assertEquals(expected.get(field), actual.get(field), name + ": " + field);
                }
            }
        }
        assertTrue(kept > 0 && dropped > 0, "the cases hold kept and dropped events: " + kept + " / " + dropped);
    }

    @Test
    void the_output_is_compact_json_in_rustpipes_field_order_with_shortest_doubles() {
        byte[] output = Stateless.transform(utf8("{\"app_version\":\"3.3.0\",\"latency_ms\":195,\"region\":\"eu-central\","
                + "\"seq\":3,\"service\":\"checkout\",\"sla_ms\":250,\"status\":200,\"ts_us\":1767225600003000}"));
        assertArrayEquals(utf8("{\"seq\":3,\"ts_us\":1767225600003000,\"region\":\"eu-central\",\"service\":\"checkout\","
                + "\"latency_ms\":195,\"sla_ms\":250,\"latency_ratio\":0.78,\"sla_status\":\"ok\"}"), output,
                () -> new String(output, StandardCharsets.UTF_8));
    }

    @Test
    void a_latency_above_the_sla_is_a_breach_and_at_the_sla_is_ok() {
        String at = "{\"seq\":1,\"ts_us\":5,\"region\":\"eu-west\",\"service\":\"s\",\"latency_ms\":%d,\"sla_ms\":100}";
        assertTrue(new String(Stateless.transform(utf8(String.format(at, 101))), StandardCharsets.UTF_8)
                .endsWith("\"latency_ratio\":1.01,\"sla_status\":\"breach\"}"));
        assertTrue(new String(Stateless.transform(utf8(String.format(at, 100))), StandardCharsets.UTF_8)
                .endsWith("\"latency_ratio\":1.0,\"sla_status\":\"ok\"}"));
    }

    @Test
    void the_filter_keeps_only_eu_regions() {
        String event = "{\"seq\":1,\"ts_us\":5,\"region\":\"%s\",\"service\":\"s\",\"latency_ms\":1,\"sla_ms\":100}";
        assertTrue(Stateless.kept(Stateless.decode(utf8(String.format(event, "eu-north")))));
        assertNull(Stateless.transform(utf8(String.format(event, "europe"))));
        assertNull(Stateless.transform(utf8(String.format(event, "us-east"))));
    }

    @Test
    void a_value_that_is_not_a_whole_event_is_refused() {
        String[] refused = {
            "not json",
            "{\"ts_us\":5,\"region\":\"eu-west\",\"service\":\"s\",\"latency_ms\":1,\"sla_ms\":100}",
            "{\"seq\":1,\"ts_us\":5,\"service\":\"s\",\"latency_ms\":1,\"sla_ms\":100}",
            "{\"seq\":1,\"ts_us\":5,\"region\":\"eu-west\",\"service\":\"s\",\"latency_ms\":1,\"sla_ms\":0}",
            "{\"seq\":1,\"ts_us\":5,\"region\":\"eu-west\",\"service\":\"s\",\"latency_ms\":null,\"sla_ms\":100}",
            "{\"seq\":1,\"ts_us\":5,\"region\":\"eu-west\",\"service\":\"s\",\"latency_ms\":NaN,\"sla_ms\":100}",
        };
        for (String value : refused) {
            assertThrows(IllegalArgumentException.class, () -> Stateless.transform(utf8(value)), value);
        }
    }

    private static Set<String> fields(JsonNode object) {
        Set<String> names = new TreeSet<>();
        for (Iterator<String> it = object.fieldNames(); it.hasNext(); ) {
            names.add(it.next());
        }
        return names;
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
