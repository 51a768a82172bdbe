"""Bytewax on the suite's stateless workload, configured by the suite's BENCH_* variables.

BENCH_PARALLELISM Bytewax workers (threads of one process, as `-w` starts
them; each input partition is read by one worker) run a dataflow from
Bytewax's own Kafka connectors:
KafkaSource reads the input topic from the earliest offset, a batch map step
decodes each record and turns each eu-* event into one JSON object with
latency_ratio and sla_status added, and KafkaSink's producer writes those to
the output topic. Any workload but stateless exits with one
line.

Bytewax keeps its input position in its recovery store, not in a consumer
group: each epoch (BENCH_COMMIT_INTERVAL_MS) snapshots the source offsets
into a recovery folder per run, from which a restarted process resumes. For
the suite's figures the output step also commits to the run's consumer
group, at the close of each epoch, the input offsets whose outputs KafkaSink
has already flushed: the kept events carry their positions there, and each
batch adds one position-only item per partition whose last record was
filtered out. The suite's client profile (BENCH_FETCH_MIN_BYTES, ...,
BENCH_COMPRESSION) goes to the source's consumer and the sink's producer as
librdkafka settings. Once the source has been assigned its partition,
prints "effective client config: {JSON}" and then "bytewax ready". SIGTERM
ends the source's input: the dataflow completes its last epoch (its outputs
flushed and its input offsets committed), and the app deletes the recovery
folder.
"""

import json
import os
import shutil
import signal
import sys
import tempfile
import threading
from datetime import timedelta
from pathlib import Path

import orjson
from bytewax import operators as op
from bytewax.connectors.kafka import KafkaSink, KafkaSinkMessage, KafkaSource
from bytewax.dataflow import Dataflow
from bytewax.inputs import StatefulSourcePartition
from bytewax.outputs import FixedPartitionedSink, StatefulSinkPartition
from bytewax.recovery import RecoveryConfig, init_db_dir
from bytewax.run import cli_main
from confluent_kafka import Consumer, TopicPartition

# The Python apps' shared helpers: products/common/python/bench_common.py.
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "common", "python")))
from bench_common import BenchEnv, ClientProfile, enrich, is_kept, librdkafka_effective  # noqa: E402

READY_LINE = "bytewax ready"
CONFIG_LINE = "effective client config: "

env = BenchEnv("bytewax")

# The one key every output item carries, so that the output step's single
# partition receives them all.
OUTPUT_KEY = "out"


def client_profile():
    """The suite's client profile (BENCH_* variables) as librdkafka settings.

    Bytewax's Kafka connectors are built on librdkafka (confluent-kafka) and
    take extra settings as add_config: the profile's keys map one to one
    onto librdkafka's names.
    """
    profile = ClientProfile.from_env(env, librdkafka=True)
    profile.check_idempotence(env)
    consumer = {
        "fetch.min.bytes": str(profile.fetch_min_bytes),
        "fetch.wait.max.ms": str(profile.fetch_max_wait_ms),
        "max.partition.fetch.bytes": str(profile.max_partition_fetch_bytes),
        "fetch.queue.backoff.ms": str(profile.fetch_queue_backoff_ms),
        "isolation.level": "read_committed",
    }
    producer = {
        "linger.ms": str(profile.linger_ms),
        "acks": profile.acks,
        "enable.idempotence": "true" if profile.enable_idempotence else "false",
        "compression.type": profile.compression,
    }
    return consumer, producer


def stateless(messages):
    """One batch of input records' output items, each (partition, next
    offset, the enriched event as a KafkaSinkMessage or None). Only eu-*
    events travel to the output step, with their positions; where a
    partition's last record in the batch was filtered out, one item with its
    position and no output follows, so that the committed position covers the
    filtered records too without carrying each of them."""
    items = []
    ends = {}
    kept_ends = {}
    for message in messages:
        next_offset = message.offset + 1
        ends[message.partition] = next_offset
        event = orjson.loads(message.value)
        if is_kept(event):
            output = KafkaSinkMessage(None, orjson.dumps(enrich(event)))
            items.append((OUTPUT_KEY, (message.partition, next_offset, output)))
            kept_ends[message.partition] = next_offset
    for partition, next_offset in ends.items():
        if kept_ends.get(partition) != next_offset:
            items.append((OUTPUT_KEY, (partition, next_offset, None)))
    return items


class ReadySource(KafkaSource):
    """KafkaSource that prints the effective client configuration and then
    the readiness line once its partition is built: the partition's consumer
    has been assigned the partition (Bytewax assigns it, with no group
    membership) at the resume offset or the earliest one."""

    def __init__(self, effective, **kwargs):
        super().__init__(**kwargs)
        self._effective = effective

    def build_part(self, step_id, for_part, resume_state):
        part = StoppableSourcePartition(super().build_part(step_id, for_part, resume_state))
        print(CONFIG_LINE + json.dumps(self._effective()), flush=True)
        print(READY_LINE, flush=True)
        return part


class StoppableSourcePartition(StatefulSourcePartition):
    """KafkaSource's partition, ended by SIGTERM: its next poll after the
    signal reports the end of its input, so Bytewax closes the last epoch
    (the output step's snapshot commits it) and the dataflow completes."""

    def __init__(self, part):
        self._part = part

    def next_batch(self):
        if STOPPING.is_set():
            raise StopIteration()
        return self._part.next_batch()

    def next_awake(self):
        return self._part.next_awake()

    def snapshot(self):
        return self._part.snapshot()

    def close(self):
        self._part.close()


class Committer:
    """Commits input positions to the run's consumer group with a consumer
    that never joins it (Bytewax's source reads by assignment, outside any
    group). Only positions whose outputs are flushed are ever handed here."""

    def __init__(self, bootstrap, group_id, topic):
        self._consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group_id,
                "enable.auto.commit": False,
            }
        )
        self._topic = topic
        self.written = {}
        self._committed = {}

    def commit(self):
        """Commits the written positions not committed yet."""
        offsets = [
            TopicPartition(self._topic, partition, offset)
            for partition, offset in self.written.items()
            if self._committed.get(partition) != offset
        ]
        if offsets:
            self._consumer.commit(offsets=offsets, asynchronous=False)
            self._committed.update((tp.partition, tp.offset) for tp in offsets)

    def close(self):
        self._consumer.close()


class CommittingSinkPartition(StatefulSinkPartition):
    """Writes a batch's outputs through KafkaSink's partition, which produces
    them and flushes the producer, and only then records the batch's input
    positions as written. Bytewax calls snapshot() at the close of each
    epoch in which it wrote: the written positions are committed there."""

    def __init__(self, sink_part, committer):
        self._sink_part = sink_part
        self._committer = committer

    def write_batch(self, values):
        self._sink_part.write_batch([output for _, _, output in values if output is not None])
        written = self._committer.written
        for partition, next_offset, _ in values:
            if next_offset > written.get(partition, -1):
                written[partition] = next_offset

    def snapshot(self):
        self._committer.commit()
        return None

    def close(self):
        self._sink_part.close()


class CommittingSink(FixedPartitionedSink):
    """Bytewax's KafkaSink in an output step with one partition whose
    epoch-close snapshot commits the input offsets of the outputs written."""

    def __init__(self, kafka_sink, committer):
        self._kafka_sink = kafka_sink
        self._committer = committer

    def list_parts(self):
        return [OUTPUT_KEY]

    def build_part(self, step_id, for_part, resume_state):
        return CommittingSinkPartition(self._kafka_sink.build(step_id, 0, 1), self._committer)


# Set by SIGTERM: the source then ends its input.
STOPPING = threading.Event()


def stop_on_sigterm(signum, frame):
    """Python runs this handler between the dataflow's Python steps (the
    worker runs in the main thread); the source sees the flag at its next
    poll."""
    STOPPING.set()


def main():
    workload = env("BENCH_WORKLOAD")
    if workload != "stateless":
        sys.exit(f"bytewax: workload `{workload}` is not implemented")
    delivery = env("BENCH_DELIVERY")
    if delivery != "at-least-once":
        sys.exit(f"bytewax: BENCH_DELIVERY `{delivery}` is not offered (at-least-once only)")
    consumer_config, producer_config = client_profile()
    epoch_ms = env.integer("BENCH_COMMIT_INTERVAL_MS", 1)
    bootstrap = env("BENCH_BOOTSTRAP")
    group_id = env("BENCH_GROUP_ID")
    input_topic = env("BENCH_INPUT_TOPIC")

    source = None
    kafka_sink = KafkaSink(
        brokers=[bootstrap], topic=env("BENCH_OUTPUT_TOPIC"), add_config=producer_config
    )

    def effective():
        """The profile as Bytewax hands it to confluent-kafka: the
        add_config each connector merges over its own settings (neither
        sets a profile key itself), plus the epoch interval."""
        return {
            **librdkafka_effective(source._add_config, kafka_sink._add_config),
            "commit_interval_ms": epoch_ms,
        }

    source = ReadySource(
        effective,
        brokers=[bootstrap],
        topics=[input_topic],
        add_config=consumer_config,
    )
    committer = Committer(bootstrap, group_id, input_topic)

    flow = Dataflow("stateless")
    records = op.input("input", flow, source)
    outputs = op.flat_map_batch("stateless", records, stateless)
    op.output("output", outputs, CommittingSink(kafka_sink, committer))

    # The recovery folder is the run's (named after its consumer group): a
    # process restarted after a kill resumes from its last snapshot.
    recovery_dir = Path(tempfile.gettempdir()) / f"bytewax-recovery-{group_id}"
    if not recovery_dir.exists():
        recovery_dir.mkdir()
        init_db_dir(recovery_dir, 1)

    signal.signal(signal.SIGTERM, stop_on_sigterm)
    try:
        cli_main(
            flow,
            workers_per_process=env.integer("BENCH_PARALLELISM", 1),
            epoch_interval=timedelta(milliseconds=epoch_ms),
            recovery_config=RecoveryConfig(str(recovery_dir)),
        )
    finally:
        committer.close()
    # The dataflow ended (SIGTERM): its recovery folder is no longer needed.
    shutil.rmtree(recovery_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
