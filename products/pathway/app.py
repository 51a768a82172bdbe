"""Pathway on the suite's stateless workload, configured by the suite's BENCH_* variables.

Reads the input topic from the earliest offset with pw.io.kafka.read (JSON
parsed by Pathway's Rust engine into the six columns the job needs), keeps the
events whose region starts with "eu-", adds latency_ratio and sla_status as
computed columns, and writes one JSON object per kept event to the output
topic with pw.io.kafka.write (format plaintext: the object is built in the
engine as a string column, so it carries exactly the eight fields of the
workload and none of the time and diff fields Pathway's json format adds).
Any other workload exits with one line. The suite's client profile
(BENCH_FETCH_MIN_BYTES, ..., BENCH_COMPRESSION) goes to the reader's and the
writer's rdkafka settings; the reader's consumer joins the run's group as a
static member (BENCH_GROUP_INSTANCE_ID, BENCH_SESSION_TIMEOUT_MS). The
reader's autocommit_duration_ms, Pathway's minibatch interval, comes from
BENCH_SETTINGS (the product.yaml `settings:` map); librdkafka auto-commits
the group's offsets and Pathway persistence snapshots its own position
every BENCH_COMMIT_INTERVAL_MS.

Readiness: the dataflow has a small readiness branch, a one-row static table
at engine time 2 concatenated with an always-empty filter of the Kafka
input, and a pw.io.subscribe on it. The engine hands that row to the
subscription only once the Kafka input's time has passed it, that is once
pw.run is executing the dataflow and the Kafka reader has been built (its
consumer created and subscribed to the topic) and has advanced its time
(after the persistence rewind). The callback prints "effective client
config: {JSON}" (the settings handed to Pathway's connectors, and the
engine's under "engine") and then "pathway ready". SIGTERM stops it.
"""

import json
import os
import sys
import tempfile

import pathway as pw

# The Python apps' shared helpers: products/common/python/bench_common.py.
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "common", "python")))
from bench_common import KEPT_REGION_PREFIX, BenchEnv, ClientProfile, librdkafka_effective  # noqa: E402

READY_LINE = "pathway ready"
CONFIG_LINE = "effective client config: "

env = BenchEnv("pathway")

# The product.yaml `settings:` keys this app applies (BENCH_SETTINGS).
SETTINGS = ("autocommit_duration_ms",)

# The engine time of the readiness row: above 1, since times 0 and 1 are
# those Pathway gives replayed (persisted) data and pw.io.subscribe skips.
READY_TIME = 2


class ReadyRow(pw.Schema):
    """The readiness branch's one column."""

    ready: bool


class Event(pw.Schema):
    """The input fields the stateless job reads (the other 13 are skipped)."""

    seq: int
    ts_us: int
    region: str
    service: str
    latency_ms: int
    sla_ms: int


def main():
    workload = env("BENCH_WORKLOAD")
    if workload != "stateless":
        sys.exit(f"pathway: workload `{workload}` is not implemented")
    delivery = env("BENCH_DELIVERY")
    if delivery != "at-least-once":
        sys.exit(f"pathway: BENCH_DELIVERY `{delivery}` is not offered (at-least-once only)")
    bootstrap = env("BENCH_BOOTSTRAP")
    commit_interval_ms = env.integer("BENCH_COMMIT_INTERVAL_MS", 1)
    threads = env.integer("BENCH_PARALLELISM", 1)
    group_id = env("BENCH_GROUP_ID")
    profile = ClientProfile.from_env(env, static_member=True, librdkafka=True)
    consumer = {
        "bootstrap.servers": bootstrap,
        "group.id": group_id,
        "auto.offset.reset": "earliest",
        "isolation.level": "read_committed",
        "fetch.min.bytes": str(profile.fetch_min_bytes),
        "fetch.wait.max.ms": str(profile.fetch_max_wait_ms),
        "max.partition.fetch.bytes": str(profile.max_partition_fetch_bytes),
        "fetch.queue.backoff.ms": str(profile.fetch_queue_backoff_ms),
        "session.timeout.ms": str(profile.session_timeout_ms),
        # The group's committed offsets come from librdkafka's auto-commit of
        # this consumer (Pathway's reader commits none itself).
        "enable.auto.commit": "true",
        "auto.commit.interval.ms": str(commit_interval_ms),
    }
    # Pathway's streaming reader subscribes (group management). With one
    # worker its one consumer is a static member of the run's group, so a
    # process restarted after a kill rejoins under the same instance id and
    # gets its partition back at once. Each of several workers has a consumer
    # of its own built from this one configuration, and two static members
    # with one instance id fence each other: then they join as dynamic
    # members, and a restart waits for the group to rebalance.
    if threads == 1:
        consumer["group.instance.id"] = profile.group_instance_id
    producer = {
        "bootstrap.servers": bootstrap,
        "linger.ms": str(profile.linger_ms),
        "acks": profile.acks,
        "enable.idempotence": "true" if profile.enable_idempotence else "false",
        "compression.type": profile.compression,
    }
    profile.check_idempotence(env)

    settings = env.settings(SETTINGS)
    minibatch_ms = settings["autocommit_duration_ms"]
    events = pw.io.kafka.read(
        consumer,
        topic=env("BENCH_INPUT_TOPIC"),
        schema=Event,
        format="json",
        autocommit_duration_ms=minibatch_ms,
        name="input",
    )
    kept = events.filter(pw.this.region.str.startswith(KEPT_REGION_PREFIX))
    enriched = kept.with_columns(latency_ratio=pw.this.latency_ms / pw.this.sla_ms)
    enriched = enriched.with_columns(
        sla_status=pw.if_else(pw.this.latency_ratio > 1, "breach", "ok")
    )
    # The output object, built by the engine: seq, ts_us and the integers
    # print as JSON numbers, latency_ratio as the shortest text that reads
    # back as the same float64, region and service (plain ASCII names) and
    # sla_status as JSON strings.
    value = (
        '{"seq":'
        + pw.this.seq.to_string()
        + ',"ts_us":'
        + pw.this.ts_us.to_string()
        + ',"region":"'
        + pw.this.region
        + '","service":"'
        + pw.this.service
        + '","latency_ms":'
        + pw.this.latency_ms.to_string()
        + ',"sla_ms":'
        + pw.this.sla_ms.to_string()
        + ',"latency_ratio":'
        + pw.this.latency_ratio.to_string()
        + ',"sla_status":"'
        + pw.this.sla_status
        + '"}'
    )
    pw.io.kafka.write(
        enriched.select(value=value),
        producer,
        topic_name=env("BENCH_OUTPUT_TOPIC"),
        format="plaintext",
        name="output",
    )

    effective = {
        **librdkafka_effective(consumer, producer),
        "session_timeout_ms": int(consumer["session.timeout.ms"]),
        "commit_interval_ms": commit_interval_ms,
        "engine": {"autocommit_duration_ms": minibatch_ms, "threads": threads},
    }

    # Readiness: a one-row static table at engine time READY_TIME, concatenated
    # with an always-empty filter of the Kafka input. A subscription hands on
    # a time's rows only once the frontier of everything it reads has passed
    # that time (it consolidates its input by time), here the Kafka input's
    # too, whose time stays at 0 until its reader is built (consumer created
    # and subscribed) and the persistence rewind is done, and then advances
    # to the wall clock, and again every autocommit_duration_ms. So the
    # callback runs once the engine is running and its Kafka input is live.
    marker = pw.debug.table_from_rows(ReadyRow, [(True, READY_TIME, 1)], is_stream=True)
    live = kept.filter(pw.this.seq < 0).select(ready=pw.this.seq < 0)
    announced = []

    def on_ready(key, row, time, is_addition):
        if is_addition and not announced:
            announced.append(time)
            print(CONFIG_LINE + json.dumps(effective), flush=True)
            print(READY_LINE, flush=True)

    pw.io.subscribe(marker.concat_reindex(live), on_change=on_ready, name="ready")

    # Pathway's own input position: persistence (mode PERSISTING, which needs
    # no license key; OPERATOR_PERSISTING does) on the local file system, one
    # folder per consumer group, so a restarted process resumes from its last
    # snapshot rather than from the group's offsets.
    state_dir = os.path.join(tempfile.gettempdir(), "pathway-state-" + group_id)
    # Pathway's worker threads, as `pathway spawn --threads N` sets them.
    os.environ["PATHWAY_THREADS"] = str(threads)
    pw.run(
        monitoring_level=pw.MonitoringLevel.NONE,
        persistence_config=pw.persistence.Config(
            pw.persistence.Backend.filesystem(state_dir),
            snapshot_interval_ms=commit_interval_ms,
        ),
    )


if __name__ == "__main__":
    main()
