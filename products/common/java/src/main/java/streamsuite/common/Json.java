package streamsuite.common;

import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;

/** The apps' JSON mappers, configured alike. */
public final class Json {
    private Json() {}

    /**
     * A mapper builder for the suite's events: the fields a workload does not
     * read are skipped, a null where a number belongs and a NaN or Infinity
     * are refused, so a record that is not an event fails loudly.
     */
    public static JsonMapper.Builder mapper() {
        return JsonMapper.builder()
                .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
                .disable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS);
    }
}
