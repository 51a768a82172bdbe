package streamsuite.flink;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Iterator;
import java.util.Locale;
import org.apache.flink.connector.kafka.sink.TransactionNamingStrategy;

/** The run's settings, read from the BENCH_* variables the suite sets. */
record Settings(
        String bootstrap,
        String inputTopic,
        String outputTopic,
        String groupId,
        String transactionalId,
        boolean exactlyOnce,
        long commitIntervalMs,
        int parallelism,
        Workload workload,
        ClientProfile client,
        TransactionNamingStrategy transactionNaming) {

    static Settings fromEnv() {
        // First: a workload this product does not run is the one line to report.
        Workload workload = Workload.parse("flink", require("BENCH_WORKLOAD"));
        String delivery = require("BENCH_DELIVERY");
        boolean exactlyOnce = switch (delivery) {
            case "exactly-once" -> true;
            case "at-least-once" -> false;
            default -> throw new IllegalArgumentException(
                    "flink: BENCH_DELIVERY `" + delivery + "` is not at-least-once or exactly-once");
        };
        String groupId = require("BENCH_GROUP_ID");
        String txn = System.getenv("BENCH_TRANSACTIONAL_ID");
        return new Settings(
                require("BENCH_BOOTSTRAP"),
                require("BENCH_INPUT_TOPIC"),
                require("BENCH_OUTPUT_TOPIC"),
                groupId,
                txn == null || txn.isBlank() ? groupId + "-txn" : txn,
                exactlyOnce,
                Long.parseLong(require("BENCH_COMMIT_INTERVAL_MS")),
                Integer.parseInt(envOr("BENCH_PARALLELISM", "1")),
                workload,
                ClientProfile.fromEnv("flink", exactlyOnce),
                parseTransactionNaming());
    }

    /**
     * The product.yaml `settings:` map (BENCH_SETTINGS, JSON): the one key,
     * transaction_naming, names the exactly-once sink's transactional id
     * strategy (pooling or incrementing).
     */
    private static TransactionNamingStrategy parseTransactionNaming() {
        JsonNode settings;
        try {
            settings = new ObjectMapper().readTree(envOr("BENCH_SETTINGS", "{}"));
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("flink: BENCH_SETTINGS is not JSON: " + e.getOriginalMessage());
        }
        if (!settings.isObject()) {
            throw new IllegalArgumentException("flink: BENCH_SETTINGS is not a JSON object");
        }
        for (Iterator<String> keys = settings.fieldNames(); keys.hasNext(); ) {
            String key = keys.next();
            if (!key.equals("transaction_naming")) {
                throw new IllegalArgumentException("flink: BENCH_SETTINGS has a key this app does not apply: " + key);
            }
        }
        JsonNode naming = settings.get("transaction_naming");
        if (naming == null || !naming.isTextual()) {
            throw new IllegalArgumentException(
                    "flink: BENCH_SETTINGS has no transaction_naming (product.yaml `settings:`)");
        }
        return switch (naming.asText()) {
            case "pooling" -> TransactionNamingStrategy.POOLING;
            case "incrementing" -> TransactionNamingStrategy.INCREMENTING;
            default -> throw new IllegalArgumentException("flink: transaction_naming `" + naming.asText()
                    + "` is not pooling or incrementing");
        };
    }

    /** The naming strategy as the settings spell it. */
    String transactionNamingName() {
        return transactionNaming.name().toLowerCase(Locale.ROOT);
    }

    private static String require(String name) {
        return require("flink", name);
    }

    static String require(String product, String name) {
        String value = System.getenv(name);
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(product + ": " + name + " is not set (the suite sets it)");
        }
        return value;
    }

    private static String envOr(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }
}
