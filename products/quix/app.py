"""Quix Streams on the suite's workloads, configured by the suite's BENCH_* variables.

Consumes the input topic from the earliest offset with the run's consumer
group and runs the pipeline BENCH_WORKLOAD names (any other exits with one
line):
- stateless: keeps the events of eu-* regions, adds latency_ratio and
  sla_status, and writes one JSON object per kept event to the output topic;
- passthrough: writes every input record's value bytes to the output topic
  unchanged (bytes deserializer and serializer, no JSON parse);
- windowed-lowcard: event time from ts_us, re-keyed by region|service,
  tumbling windows of 1 s counting and summing latency_ms, one final pane
  per window and key written once the window has closed.
Quix commits a checkpoint every BENCH_COMMIT_INTERVAL_MS: at-least-once
flushes the producer and then commits the input offsets; exactly-once
commits one Kafka transaction holding the outputs (and window state
changes) and the input offsets. The suite's client profile
(BENCH_FETCH_MIN_BYTES, ..., BENCH_COMPRESSION) goes to the consumer and the
producer as librdkafka settings. Once the group has assigned it its input
partitions, prints "effective client config: {JSON}" (read back from the
configuration Quix hands to confluent-kafka) and then "quix ready"; SIGTERM
stops it after a last checkpoint. The consumer is a static member of the
group (BENCH_GROUP_INSTANCE_ID, BENCH_SESSION_TIMEOUT_MS); exactly-once sets
the transactional producer's retry backoff to
BENCH_TRANSACTION_RETRY_BACKOFF_MS and its transaction timeout to
BENCH_TRANSACTION_TIMEOUT_MS. After a broker restart librdkafka may
report the member's own rejoin as fencing, a fatal error for the consumer:
the app then starts the application over in its process, from the committed
offsets, as a supervisor would restart it.
"""

import json
import os
import shutil
import sys
import tempfile

from confluent_kafka import KafkaError, KafkaException
from quixstreams import Application
from quixstreams.kafka.exceptions import KafkaConsumerException
from quixstreams.dataframe.windows import Count, Max, Sum

# The Python apps' shared helpers: products/common/python/bench_common.py.
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "common", "python")))
from bench_common import BenchEnv, ClientProfile, enrich, is_kept, librdkafka_effective, run_members  # noqa: E402

READY_LINE = "quix ready"
CONFIG_LINE = "effective client config: "

env = BenchEnv("quix")

# windowed-lowcard: tumbling windows of 1 s, no grace (allowed lateness 0).
WINDOW_MS = 1000


def client_profile():
    """The suite's client profile (BENCH_* variables) as librdkafka settings.

    Quix is built on librdkafka (confluent-kafka): the profile's keys map
    one to one onto librdkafka's names. The consumer joins the run's group
    as a static member (group.instance.id, session.timeout.ms), so a process
    restarted after a kill gets its partition back at once.
    """
    profile = ClientProfile.from_env(env, static_member=True, librdkafka=True)
    consumer = {
        "fetch.min.bytes": profile.fetch_min_bytes,
        "fetch.wait.max.ms": profile.fetch_max_wait_ms,
        "max.partition.fetch.bytes": profile.max_partition_fetch_bytes,
        "fetch.queue.backoff.ms": profile.fetch_queue_backoff_ms,
        "isolation.level": "read_committed",
        "group.instance.id": profile.group_instance_id,
        "session.timeout.ms": profile.session_timeout_ms,
    }
    producer = {
        "linger.ms": profile.linger_ms,
        "acks": profile.acks,
        "enable.idempotence": profile.enable_idempotence,
        "compression.type": profile.compression,
    }
    return profile, consumer, producer


def effective_config(app):
    """The profile as Quix resolved it: read back from the configuration
    dicts its consumer and producer hand to confluent-kafka (Quix's own
    defaults and overrides included), plus the checkpoint interval; on
    exactly-once, the transactional producer's retry backoff and transaction
    timeout too."""
    consumer = app._consumer._consumer_config
    producer = app._producer._producer._producer_config
    effective = {
        **librdkafka_effective(consumer, producer),
        "commit_interval_ms": round(app.config.commit_interval * 1000),
        "session_timeout_ms": int(consumer["session.timeout.ms"]),
    }
    if app.config.exactly_once:
        # Set to the same value as retry.backoff.max.ms (main()).
        effective["transaction_retry_backoff_ms"] = int(producer["retry.backoff.ms"])
        effective["transaction_timeout_ms"] = int(producer["transaction.timeout.ms"])
    return effective


def stateless(app, input_topic, output_topic):
    """eu-* events, enriched, one JSON object each."""
    source = app.topic(input_topic, value_deserializer="json")
    sink = app.topic(output_topic, value_serializer="json")
    sdf = app.dataframe(source)
    sdf = sdf.filter(is_kept)
    sdf = sdf.apply(enrich)
    sdf.to_topic(sink)


def passthrough(app, input_topic, output_topic):
    """Every record's value bytes as they came: the bytes deserializer and
    serializer hand them through without a JSON parse, and the (absent) key
    stays absent."""
    source = app.topic(input_topic, value_deserializer="bytes")
    sink = app.topic(output_topic, value_serializer="bytes")
    app.dataframe(source).to_topic(sink)


def event_time(value, headers, timestamp, timestamp_type):
    """The event time of a record in ms: its ts_us, not the Kafka timestamp
    (the producer's CreateTime, close to but not equal to ts_us)."""
    return value["ts_us"] // 1000


def region_service(event):
    """The window key."""
    return f"{event['region']}|{event['service']}"


def pane(window, key, timestamp, headers):
    """The pane of one closed window and key, times in µs from Quix's ms."""
    region, service = key.split("|", 1)
    return {
        "window_start_us": window["start"] * 1000,
        "window_end_us": window["end"] * 1000,
        "region": region,
        "service": service,
        "count": window["count"],
        "sum_latency_ms": window["sum_latency_ms"],
        "max_latency_ms": window["max_latency_ms"],
    }


def windowed_lowcard(app, input_topic, output_topic):
    """Tumbling event-time windows of 1 s per region|service, as Quix's
    docs build them: group_by, tumbling_window(...).agg(...).final().

    Timestamps come from ts_us through the input topic's
    timestamp_extractor. group_by re-keys the stream; on a one-partition
    input Quix re-keys in place, with more partitions it writes through a
    repartition topic, which carries each record's extracted timestamp as
    its Kafka timestamp. final(closing_strategy="partition") closes a window
    for every key of the partition as soon as any record at or past its end
    is processed; Quix's default ("key") would close a key's window only
    when a later record of that same key arrives.
    """
    source = app.topic(input_topic, value_deserializer="json", timestamp_extractor=event_time)
    sink = app.topic(output_topic, key_serializer="str", value_serializer="json")
    sdf = app.dataframe(source)
    sdf = sdf.group_by(region_service, name="region-service")
    sdf = sdf.tumbling_window(WINDOW_MS, grace_ms=0).agg(
        count=Count(),
        sum_latency_ms=Sum("latency_ms"),
        max_latency_ms=Max("latency_ms"),
    )
    sdf = sdf.final(closing_strategy="partition")
    sdf = sdf.apply(pane, metadata=True)
    sdf.to_topic(sink)


# Each workload's pipeline, and whether it keeps state (window state in
# RocksDB, backed by a changelog topic Quix creates).
WORKLOADS = {
    "stateless": (stateless, False),
    "passthrough": (passthrough, False),
    "windowed-lowcard": (windowed_lowcard, True),
}


class ReadyApplication(Application):
    """Prints the effective client configuration and then the readiness
    line, once partitions are assigned.

    Quix has no public assignment hook: this wraps its own assignment
    callback (Application._on_assign, present in Quix Streams 3.x).
    """

    # Class-wide: an application started over after fencing is ready at once
    # and prints nothing again.
    _ready = False

    def _on_assign(self, consumer, topic_partitions):
        super()._on_assign(consumer, topic_partitions)
        if topic_partitions and not ReadyApplication._ready:
            ReadyApplication._ready = True
            print(CONFIG_LINE + json.dumps(effective_config(self)), flush=True)
            print(READY_LINE, flush=True)


def main():
    workload = env("BENCH_WORKLOAD")
    if workload not in WORKLOADS:
        sys.exit(f"quix: workload `{workload}` is not implemented")
    pipeline, stateful = WORKLOADS[workload]
    delivery = env("BENCH_DELIVERY")
    guarantee = {"at-least-once": "at-least-once", "exactly-once": "exactly-once"}.get(delivery)
    if guarantee is None:
        sys.exit(f"quix: BENCH_DELIVERY `{delivery}` is not a delivery mode")
    profile, consumer_config, producer_config = client_profile()
    commit_interval_ms = env.integer("BENCH_COMMIT_INTERVAL_MS", 0)
    if guarantee == "exactly-once":
        producer_config["transactional.id"] = env("BENCH_TRANSACTIONAL_ID")
        # The suite's one rule for every exactly-once line: the transactional
        # producer's retry backoff (librdkafka's retry.backoff.ms, and
        # retry.backoff.max.ms, the cap of its exponential growth, set to the
        # same value) is BENCH_TRANSACTION_RETRY_BACKOFF_MS.
        backoff = env.integer("BENCH_TRANSACTION_RETRY_BACKOFF_MS", 1)
        producer_config["retry.backoff.ms"] = backoff
        producer_config["retry.backoff.max.ms"] = backoff
        # And its transaction timeout (librdkafka's default is 60000): how long
        # a transaction a killed process left open may hold read_committed
        # readers, the same for every exactly-once line.
        producer_config["transaction.timeout.ms"] = env.integer("BENCH_TRANSACTION_TIMEOUT_MS", 1)
    # librdkafka refuses an idempotent producer without acks=all; Quix makes
    # the transactional producer of exactly-once idempotent whatever the
    # profile says.
    profile.check_idempotence(env, exactly_once=guarantee == "exactly-once")
    # Quix keeps state (RocksDB) under state_dir, even when the pipeline has
    # none; a folder per run keeps the product folder clean, and a restarted
    # run rebuilds its window state from the changelog topic.
    state_dir = tempfile.mkdtemp(prefix="quix-state-")
    try:
        build = lambda: ReadyApplication(  # noqa: E731
            broker_address=env("BENCH_BOOTSTRAP"),
            consumer_group=env("BENCH_GROUP_ID"),
            auto_offset_reset="earliest",
            commit_interval=commit_interval_ms / 1000.0,
            processing_guarantee=guarantee,
            consumer_extra_config=consumer_config,
            producer_extra_config=producer_config,
            state_dir=state_dir,
            # The suite creates the run's input and output topics; a stateful
            # pipeline's changelog topic (named after the run's consumer
            # group) is Quix's to create. A stateless one needs none.
            auto_create_topics=stateful,
            use_changelog_topics=stateful,
        )
        wire = lambda app: pipeline(app, env("BENCH_INPUT_TOPIC"), env("BENCH_OUTPUT_TOPIC"))  # noqa: E731
        while run_application(build, wire):
            print("quix: the static member was fenced by its own rejoin; starting over", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(state_dir, ignore_errors=True)


def run_application(build, wire):
    """Runs one application until it stops; True when it stopped because
    the consumer was fenced (the caller starts a new one), False on a stop."""
    app = build()
    wire(app)
    try:
        app.run()
    except (KafkaConsumerException, KafkaException) as error:
        # The fencing reaches the app from the consumer (a fatal error) or
        # from the transaction's offset commit (FENCED_INSTANCE_ID).
        kafka_error = error.error if isinstance(error, KafkaConsumerException) else error.args[0]
        if not isinstance(kafka_error, KafkaError) or not (
            kafka_error.code() == KafkaError.FENCED_INSTANCE_ID
            or (kafka_error.fatal() and "fenced" in kafka_error.str().lower())
        ):
            raise
        return True
    return False


if __name__ == "__main__":
    run_members("quix", READY_LINE, main)
