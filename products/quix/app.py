"""Quix Streams on the stateless workload, configured by the suite's BENCH_* variables.

Consumes the input topic from the earliest offset with the run's consumer
group, keeps the events of eu-* regions, adds latency_ratio and sla_status,
and writes one JSON object per kept event to the output topic. Quix commits
a checkpoint every BENCH_COMMIT_INTERVAL_MS: at-least-once flushes the
producer and then commits the input offsets; exactly-once commits one Kafka
transaction holding the outputs and the input offsets. Prints "quix ready"
once the group has assigned it its input partitions; SIGTERM stops it after
a last checkpoint.
"""

import os
import shutil
import sys
import tempfile

from quixstreams import Application

READY_LINE = "quix ready"

# The in-house pipeline's librdkafka settings: Quix is built on librdkafka
# (confluent-kafka), so the same numbers mean the same thing here.
CONSUMER_CONFIG = {
    "fetch.min.bytes": 65536,
    "fetch.wait.max.ms": 10,
    "max.partition.fetch.bytes": 52428800,
    "isolation.level": "read_committed",
}
PRODUCER_CONFIG = {
    "acks": "all",
    "enable.idempotence": True,
    "linger.ms": 5,
    "compression.type": "lz4",
}


def env(name):
    value = os.environ.get(name)
    if not value:
        sys.exit(f"quix: {name} is not set (the suite sets it)")
    return value


def enrich(event):
    """The output record: what verification needs plus the derived fields."""
    ratio = event["latency_ms"] / event["sla_ms"]
    return {
        "seq": event["seq"],
        "ts_us": event["ts_us"],
        "region": event["region"],
        "service": event["service"],
        "latency_ms": event["latency_ms"],
        "sla_ms": event["sla_ms"],
        "latency_ratio": ratio,
        "sla_status": "breach" if ratio > 1 else "ok",
    }


class ReadyApplication(Application):
    """Prints the readiness line once partitions are assigned.

    Quix has no public assignment hook: this wraps its own assignment
    callback (Application._on_assign, present in Quix Streams 3.x).
    """

    _ready = False

    def _on_assign(self, consumer, topic_partitions):
        super()._on_assign(consumer, topic_partitions)
        if topic_partitions and not self._ready:
            self._ready = True
            print(READY_LINE, flush=True)


def main():
    delivery = env("BENCH_DELIVERY")
    guarantee = {"at-least-once": "at-least-once", "exactly-once": "exactly-once"}.get(delivery)
    if guarantee is None:
        sys.exit(f"quix: BENCH_DELIVERY `{delivery}` is not a delivery mode")
    producer_config = dict(PRODUCER_CONFIG)
    if guarantee == "exactly-once":
        producer_config["transactional.id"] = env("BENCH_TRANSACTIONAL_ID")
    # Quix keeps state (RocksDB) under state_dir even when the pipeline has
    # none; a folder per run keeps the product folder clean.
    state_dir = tempfile.mkdtemp(prefix="quix-state-")
    try:
        app = ReadyApplication(
            broker_address=env("BENCH_BOOTSTRAP"),
            consumer_group=env("BENCH_GROUP_ID"),
            auto_offset_reset="earliest",
            commit_interval=int(env("BENCH_COMMIT_INTERVAL_MS")) / 1000.0,
            processing_guarantee=guarantee,
            consumer_extra_config=CONSUMER_CONFIG,
            producer_extra_config=producer_config,
            state_dir=state_dir,
            # The suite creates the run's topics; a stateless pipeline needs
            # no changelog topic.
            auto_create_topics=False,
            use_changelog_topics=False,
        )
        source = app.topic(env("BENCH_INPUT_TOPIC"), value_deserializer="json")
        sink = app.topic(env("BENCH_OUTPUT_TOPIC"), value_serializer="json")
        sdf = app.dataframe(source)
        sdf = sdf.filter(lambda event: event["region"].startswith("eu-"))
        sdf = sdf.apply(enrich)
        sdf.to_topic(sink)
        app.run()
    finally:
        shutil.rmtree(state_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
