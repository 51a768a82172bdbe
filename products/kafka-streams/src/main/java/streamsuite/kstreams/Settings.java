package streamsuite.kstreams;

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
        ClientProfile client) {

    static Settings fromEnv() {
        // First: a workload this product does not run is the one line to report.
        Workload workload = Workload.parse("kafka-streams", require("BENCH_WORKLOAD"));
        String delivery = require("BENCH_DELIVERY");
        boolean exactlyOnce = switch (delivery) {
            case "exactly-once" -> true;
            case "at-least-once" -> false;
            default -> throw new IllegalArgumentException(
                    "kafka-streams: BENCH_DELIVERY `" + delivery + "` is not at-least-once or exactly-once");
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
                ClientProfile.fromEnv("kafka-streams", exactlyOnce));
    }

    private static String require(String name) {
        return require("kafka-streams", name);
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
