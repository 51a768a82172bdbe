package streamsuite.flink;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Iterator;
import java.util.Locale;
import org.apache.flink.connector.kafka.sink.TransactionNamingStrategy;
import streamsuite.common.BenchEnv;
import streamsuite.common.KnownCost;

/**
 * The product.yaml `settings:` map (BENCH_SETTINGS, JSON): transaction_naming
 * names the exactly-once sink's transactional id strategy (pooling or
 * incrementing); the other key, work_ns_per_record, is bench-common's
 * {@link KnownCost}.
 */
final class TransactionNaming {
    private TransactionNaming() {}

    /**
     * The strategy BENCH_SETTINGS names.
     *
     * @throws IllegalArgumentException (one line for the suite's log) when the
     *     settings are not a JSON object holding transaction_naming and at
     *     most the known cost, or name another strategy
     */
    static TransactionNamingStrategy fromEnv(BenchEnv env) {
        JsonNode settings = env.productSettings();
        for (Iterator<String> keys = settings.fieldNames(); keys.hasNext(); ) {
            String key = keys.next();
            if (!key.equals("transaction_naming") && !key.equals(KnownCost.KEY)) {
                throw env.error("BENCH_SETTINGS has a key this app does not apply: " + key);
            }
        }
        JsonNode naming = settings.get("transaction_naming");
        if (naming == null || !naming.isTextual()) {
            throw env.error("BENCH_SETTINGS has no transaction_naming (product.yaml `settings:`)");
        }
        return switch (naming.asText()) {
            case "pooling" -> TransactionNamingStrategy.POOLING;
            case "incrementing" -> TransactionNamingStrategy.INCREMENTING;
            default -> throw env.error("transaction_naming `" + naming.asText() + "` is not pooling or incrementing");
        };
    }

    /** The strategy as the settings spell it. */
    static String name(TransactionNamingStrategy strategy) {
        return strategy.name().toLowerCase(Locale.ROOT);
    }
}
