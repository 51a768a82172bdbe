package streamsuite.common;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The BENCH_* variables the suite sets for a product's process, read on behalf
 * of one product. Every error is an {@link IllegalArgumentException} whose
 * message is one line for the suite's log, naming the product and the
 * variable; the apps print it and exit.
 */
public final class BenchEnv {
    private final String product;
    private final Map<String, String> variables;

    /** The variables in {@code variables}, read for {@code product} (the name errors start with). */
    public BenchEnv(String product, Map<String, String> variables) {
        this.product = Objects.requireNonNull(product);
        this.variables = Map.copyOf(variables);
    }

    /** This process's environment, read for {@code product}. */
    public static BenchEnv system(String product) {
        return new BenchEnv(product, System.getenv());
    }

    /** The product the variables are read for. */
    public String product() {
        return product;
    }

    /** An error about this product's configuration: the message, after the product's name. */
    public IllegalArgumentException error(String message) {
        return new IllegalArgumentException(product + ": " + message);
    }

    /** The variable's value, as set. */
    public String require(String name) {
        String value = variables.get(name);
        if (value == null || value.isBlank()) {
            throw error(name + " is not set (the suite sets it)");
        }
        return value;
    }

    /** The variable's value, or {@code fallback} when it is unset or blank. */
    public String orElse(String name, String fallback) {
        String value = variables.get(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    /**
     * The product's own settings (product.yaml `settings:`, as the run has
     * them), from BENCH_SETTINGS: a JSON object, empty when it is unset.
     */
    public JsonNode productSettings() {
        String settings = orElse("BENCH_SETTINGS", "{}");
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(settings);
        } catch (JsonProcessingException e) {
            throw error("BENCH_SETTINGS is not JSON: " + e.getOriginalMessage());
        }
        if (root == null || !root.isObject()) {
            throw error("BENCH_SETTINGS `" + settings + "` is not a JSON object");
        }
        return root;
    }

    /** The variable as an integer of at least {@code min}. */
    public int intAtLeast(String name, int min) {
        String value = require(name);
        try {
            int parsed = Integer.parseInt(value.trim());
            if (parsed >= min) {
                return parsed;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw error(name + " `" + value + "` is not an integer >= " + min);
    }

    /** The variable as an integer of at least {@code min}, or {@code fallback} when it is unset or blank. */
    public int intAtLeast(String name, int min, int fallback) {
        return orElse(name, "").isEmpty() ? fallback : intAtLeast(name, min);
    }

    /** The variable's value, trimmed, which must be one of {@code allowed}. */
    public String oneOf(String name, Set<String> allowed) {
        String value = require(name).trim();
        if (!allowed.contains(value)) {
            throw error(name + " `" + value + "` is not one of "
                    + String.join(", ", allowed.stream().sorted().toList()));
        }
        return value;
    }
}
