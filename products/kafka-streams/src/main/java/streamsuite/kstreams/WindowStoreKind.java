package streamsuite.kstreams;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.Iterator;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowStore;
import streamsuite.common.BenchEnv;
import streamsuite.common.KnownCost;
import streamsuite.common.Workload;

/**
 * The product.yaml `settings:` map (BENCH_SETTINGS, JSON): window_store names
 * the store windowed-lowcard aggregates into, RocksDB (Kafka Streams' default)
 * or in-memory, each with its changelog topic; the other key,
 * work_ns_per_record, is bench-common's {@link KnownCost}.
 */
enum WindowStoreKind {
    ROCKSDB("rocksdb"),
    IN_MEMORY("in-memory");

    /** Its key in product.yaml's `settings:`. */
    static final String KEY = "window_store";

    private final String spelling;

    WindowStoreKind(String spelling) {
        this.spelling = spelling;
    }

    /** The kind as product.yaml spells it. */
    String spelling() {
        return spelling;
    }

    /**
     * The kind BENCH_SETTINGS names, for a run of {@code workload}.
     *
     * @throws IllegalArgumentException (one line for the suite's log) when the
     *     settings hold a key this app does not apply, no window_store, or
     *     another kind, or an in-memory store for a workload without windows
     *     (where it would silently do nothing)
     */
    static WindowStoreKind fromEnv(BenchEnv env, Workload workload) {
        JsonNode settings = env.productSettings();
        for (Iterator<String> keys = settings.fieldNames(); keys.hasNext(); ) {
            String key = keys.next();
            if (!key.equals(KEY) && !key.equals(KnownCost.KEY)) {
                throw env.error("BENCH_SETTINGS has a key this app does not apply: " + key);
            }
        }
        JsonNode kind = settings.get(KEY);
        if (kind == null || !kind.isTextual()) {
            throw env.error("BENCH_SETTINGS has no " + KEY + " (product.yaml `settings:`)");
        }
        for (WindowStoreKind known : values()) {
            if (known.spelling.equals(kind.asText())) {
                if (known != ROCKSDB && workload != Workload.WINDOWED_LOWCARD) {
                    throw env.error(KEY + " acts on windowed-lowcard only, not `" + workload.suiteName() + "`");
                }
                return known;
            }
        }
        throw env.error(KEY + " `" + kind.asText() + "` is not rocksdb or in-memory");
    }

    /**
     * The aggregate's store, named {@code name}, for windows of {@code size}
     * with no grace: RocksDB as the DSL makes it by default, or an in-memory
     * store kept for one window's length. Both keep a changelog topic, from
     * which a restarted process restores them.
     */
    <V> Materialized<String, V, WindowStore<Bytes, byte[]>> materialized(String name, Duration size) {
        return switch (this) {
            case ROCKSDB -> Materialized.as(name);
            case IN_MEMORY -> Materialized.as(Stores.inMemoryWindowStore(name, size, size, false));
        };
    }
}
