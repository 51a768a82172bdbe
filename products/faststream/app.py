"""FastStream (aiokafka) on the suite's workloads, configured by the suite's BENCH_* variables.

A batch subscriber reads the input topic from the earliest offset with the
run's consumer group, as a static member (BENCH_GROUP_INSTANCE_ID,
BENCH_SESSION_TIMEOUT_MS), up to 10,000 records a batch, and runs the
pipeline BENCH_WORKLOAD names: stateless enriches each batch's eu-* events;
passthrough takes each record's value bytes as they came (a decoder that
hands FastStream's raw bodies through, no JSON decode) and publishes them
unchanged. windowed-lowcard exits with one line (FastStream has no
windowing), as does any other workload.

Acknowledgement is manual (AckPolicy.MANUAL: FastStream itself commits
nothing). The handler hands a batch's outputs to the producer as producer
batches and returns without waiting for the broker's acknowledgements, so
the subscriber fetches the next batch at once; it records the publish
futures and the batch's input positions. Every BENCH_COMMIT_INTERVAL_MS a
commit task takes what has been handed over so far, waits for those
acknowledgements and only then commits those positions (explicit offsets,
through the subscriber's aiokafka consumer): at-least-once, no offset is
committed before its outputs are acknowledged. A failed publish ends the
process without a further commit. The subscriber's batch timeout
(batch_timeout_ms: how long a fetch waits when no records are buffered, and
how long FastStream sleeps after an empty one) comes from BENCH_SETTINGS.

The suite's client profile (BENCH_FETCH_MIN_BYTES, ..., BENCH_COMPRESSION)
goes to the subscriber's consumer and the broker's producer as aiokafka
arguments. Once the group has assigned it its input partitions, prints
"effective client config: {JSON}" (read back from the aiokafka consumer and
producer and from the subscriber) and then "faststream ready". SIGTERM stops
the subscriber after the batch in hand; before its consumer closes, the
app waits for every outstanding acknowledgement and commits once more."""

import asyncio
import json
import logging
import os
import sys
import traceback

from aiokafka import ConsumerRebalanceListener, TopicPartition
from faststream import AckPolicy, FastStream
from faststream.kafka import KafkaBroker
from faststream.kafka.annotations import KafkaMessage

# The Python apps' shared helpers: products/common/python/bench_common.py.
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "common", "python")))
from bench_common import BenchEnv, ClientProfile, enrich, is_kept, run_members  # noqa: E402

READY_LINE = "faststream ready"
CONFIG_LINE = "effective client config: "
# A batch holds at most 10,000 input records, as in the in-house pipeline.
BATCH_MAX_RECORDS = 10_000
# The product.yaml `settings:` keys this app applies (BENCH_SETTINGS): the
# subscriber's batch_timeout_ms, how long a fetch waits for records when
# none are buffered (a fetch returns at once when some are) and how long
# FastStream sleeps after a fetch that returned none.
SETTINGS = ("batch_timeout_ms",)
# One producer batch holds up to 1 MiB (aiokafka's max_batch_size, under the
# broker's default message size limit), and a publish_batch call must fit
# one: a batch's outputs are published in parts of at most so many records.
# stateless: outputs are about 30 % of the input records, about 240 bytes
# each with their header; a full input batch's outputs go out as one part,
# rarely two. passthrough: every input record goes out, up to about 420
# bytes of value and 80 of header and framing each, so 1,500 records (about
# 750 KB) a part, seven for a full input batch.
PRODUCER_BATCH_BYTES = 1024 * 1024
PUBLISH_PART_RECORDS = {"stateless": 3_000, "passthrough": 1_500}

env = BenchEnv("faststream")


def fail(reason):
    """Ends the process at once, without a further commit: the input after
    the last commit is read again on a restart (at-least-once)."""
    print(f"faststream: {reason}", file=sys.stderr, flush=True)
    os._exit(1)


def client_profile():
    """The suite's client profile (BENCH_* variables) as aiokafka arguments:
    the consumer's for the subscriber, the producer's for the broker (which
    owns the one producer every publish goes through)."""
    profile = ClientProfile.from_env(env, static_member=True)
    profile.check_idempotence(env)
    consumer = {
        "fetch_min_bytes": profile.fetch_min_bytes,
        "fetch_max_wait_ms": profile.fetch_max_wait_ms,
        "max_partition_fetch_bytes": profile.max_partition_fetch_bytes,
        # A static member of the run's group (KIP-345): a process restarted
        # after a kill rejoins under the same instance id and gets its
        # partition back at once.
        "group_instance_id": profile.group_instance_id,
        "session_timeout_ms": profile.session_timeout_ms,
    }
    producer = {
        "linger_ms": profile.linger_ms,
        "acks": profile.acks if profile.acks == "all" else int(profile.acks),
        "enable_idempotence": profile.enable_idempotence,
        "compression_type": None if profile.compression == "none" else profile.compression,
    }
    return consumer, producer


def effective_config(consumer, producer, subscriber, committer):
    """The profile as aiokafka holds it, read back from the consumer's
    fetcher and group coordinator and the producer's sender and accumulator
    (private attributes of aiokafka 0.14), the commit interval the commit
    task keeps, and the subscriber's engine settings as FastStream holds
    them."""
    fetcher = consumer._fetcher
    acks = producer._sender._acks
    return {
        "fetch_min_bytes": fetcher._fetch_min_bytes,
        "fetch_max_wait_ms": fetcher._fetch_max_wait_ms,
        "max_partition_fetch_bytes": fetcher._max_partition_fetch_bytes,
        "linger_ms": round(producer._message_accumulator._linger_time * 1000),
        "acks": "all" if acks in (-1, "all") else str(acks),
        # aiokafka keeps a transaction manager exactly when it is idempotent.
        "enable_idempotence": producer._txn_manager is not None,
        "compression": producer._compression_type or "none",
        "session_timeout_ms": consumer._coordinator._session_timeout_ms,
        "commit_interval_ms": committer.interval_ms,
        "engine": {
            "ack_policy": subscriber.ack_policy.value,
            "batch_timeout_ms": subscriber.batch_timeout_ms,
            "max_records": subscriber.max_records,
        },
    }


class Committer:
    """Commits the input positions of the batches whose outputs the broker
    has acknowledged, every BENCH_COMMIT_INTERVAL_MS.

    The handler hands each batch over with handed(): the futures of its
    publishes and its input positions, together (no await in between), so
    a snapshot of both is always consistent. commit() takes such a
    snapshot, waits for exactly those acknowledgements (asyncio.wait, which
    never cancels them), and then commits exactly those positions, only
    for partitions still assigned. A future stays in `acks` until it has
    been waited for, so a commit interrupted by the stop leaves nothing
    unwaited for the last one.
    """

    def __init__(self, interval_ms):
        self.interval_ms = interval_ms
        self.consumer = None
        self.acks = []
        self.positions = {}
        self.committed = {}
        self.lock = asyncio.Lock()
        self.task = None

    def handed(self, records, acks):
        """A batch whose outputs were handed to the producer."""
        self.acks.extend(acks)
        for record in records:
            self.positions[TopicPartition(record.topic, record.partition)] = record.offset + 1

    async def commit(self):
        async with self.lock:
            taken = len(self.acks)
            positions = dict(self.positions)
            if taken:
                pending = self.acks[:taken]
                await asyncio.wait(pending)
                for ack in pending:
                    if ack.cancelled():
                        fail("a publish was cancelled before the broker acknowledged it")
                    if ack.exception() is not None:
                        fail(f"the broker did not acknowledge a publish: {ack.exception()!r}")
                del self.acks[:taken]
            assigned = self.consumer.assignment()
            offsets = {
                tp: offset
                for tp, offset in positions.items()
                if tp in assigned and self.committed.get(tp) != offset
            }
            if offsets:
                await self.consumer.commit(offsets)
                self.committed.update(offsets)

    async def run(self):
        """A commit every interval, on a fixed cadence."""
        loop = asyncio.get_running_loop()
        deadline = loop.time()
        while True:
            deadline += self.interval_ms / 1000
            await asyncio.sleep(max(0.0, deadline - loop.time()))
            try:
                await self.commit()
            except Exception as error:  # a failed commit is tried again at the next
                print(f"faststream: offset commit failed: {error!r}", file=sys.stderr, flush=True)

    def start(self, consumer):
        """Starts the cadence on the subscriber's consumer, and puts the last
        commit in front of the consumer's stop: FastStream stops the
        subscriber (no new batch, the batch in hand finished) and only then
        the consumer, and the broker's producer after that."""
        self.consumer = consumer
        self.task = asyncio.create_task(self.run())
        stop = consumer.stop

        async def stop_after_last_commit():
            await self.last()
            await stop()

        consumer.stop = stop_after_last_commit

    async def last(self):
        """The stop's commit: every outstanding acknowledgement, then the
        positions handed over."""
        if self.task is not None:
            self.task.cancel()
            try:
                await self.task
            except asyncio.CancelledError:
                pass
            self.task = None
        try:
            await self.commit()
        except Exception as error:
            print(f"faststream: the last offset commit failed: {error!r}", file=sys.stderr, flush=True)


def raw_values(message):
    """passthrough's decoder: the batch's value bytes as FastStream's parser
    took them from aiokafka, without its default JSON decode."""
    return message.body


class ReadyListener(ConsumerRebalanceListener):
    """At the first assignment of partitions, prints the effective client
    configuration and then the readiness line. Before partitions are taken
    away, commits what is acknowledged, as aiokafka's docs suggest."""

    def __init__(self, effective, committer):
        self.effective = effective
        self.committer = committer
        self.ready = False

    async def on_partitions_revoked(self, revoked):
        if revoked and self.committer.consumer is not None:
            try:
                await self.committer.commit()
            except Exception as error:
                print(f"faststream: commit before revocation failed: {error!r}", file=sys.stderr, flush=True)

    async def on_partitions_assigned(self, assigned):
        if assigned and not self.ready:
            self.ready = True
            print(CONFIG_LINE + json.dumps(self.effective()), flush=True)
            print(READY_LINE, flush=True)


def build():
    workload = env("BENCH_WORKLOAD")
    if workload == "windowed-lowcard":
        sys.exit(
            f"faststream: workload `{workload}` is not implemented "
            "(FastStream has no windowing: no event time, window state or watermarks)"
        )
    if workload not in PUBLISH_PART_RECORDS:
        sys.exit(f"faststream: workload `{workload}` is not implemented")
    part_records = PUBLISH_PART_RECORDS[workload]
    delivery = env("BENCH_DELIVERY")
    if delivery != "at-least-once":
        sys.exit(f"faststream: delivery `{delivery}` is not offered (at-least-once only)")
    consumer_config, producer_config = client_profile()
    settings = env.settings(SETTINGS)
    committer = Committer(env.integer("BENCH_COMMIT_INTERVAL_MS", 1))
    output_topic = env("BENCH_OUTPUT_TOPIC")
    broker = KafkaBroker(
        # aiokafka takes a string as one host: a cluster's list is split.
        env("BENCH_BOOTSTRAP").split(","),
        **producer_config,
        max_batch_size=PRODUCER_BATCH_BYTES,
        # The suite creates the run's topics.
        allow_auto_create_topics=False,
        # Within the suite's grace period after SIGTERM.
        graceful_timeout=5.0,
        # FastStream logs every batch ("Received", "Processed") at this
        # level; at DEBUG they are not written, as in a production service.
        log_level=logging.DEBUG,
    )

    def effective():
        return effective_config(
            subscriber.consumer, broker.config.producer._producer.producer, subscriber, committer
        )

    subscriber = broker.subscriber(
        env("BENCH_INPUT_TOPIC"),
        batch=True,
        group_id=env("BENCH_GROUP_ID"),
        auto_offset_reset="earliest",
        isolation_level="read_committed",
        # FastStream commits nothing itself; the Committer does, on the
        # line's interval, once the outputs are acknowledged.
        ack_policy=AckPolicy.MANUAL,
        batch_timeout_ms=settings["batch_timeout_ms"],
        max_records=BATCH_MAX_RECORDS,
        **consumer_config,
        listener=ReadyListener(effective, committer),
        decoder=raw_values if workload == "passthrough" else None,
    )

    async def publish(outputs):
        """Hands every part to the producer and returns their futures,
        without waiting for the broker's acknowledgements."""
        return [
            await broker.publish_batch(
                *outputs[start : start + part_records],
                topic=output_topic,
                no_confirm=True,
            )
            for start in range(0, len(outputs), part_records)
        ]

    if workload == "stateless":

        @subscriber
        async def stateless(events: list[dict], msg: KafkaMessage) -> None:
            try:
                acks = await publish([enrich(e) for e in events if is_kept(e)])
            except Exception:
                fail("a batch failed:\n" + traceback.format_exc())
            committer.handed(msg.raw_message, acks)

    else:

        @subscriber
        async def passthrough(values: list[bytes], msg: KafkaMessage) -> None:
            try:
                acks = await publish(values)
            except Exception:
                fail("a batch failed:\n" + traceback.format_exc())
            committer.handed(msg.raw_message, acks)

    app = FastStream(broker)

    @app.after_startup
    async def start_committing():
        committer.start(subscriber.consumer)

    return app


if __name__ == "__main__":
    run_members("faststream", READY_LINE, lambda: asyncio.run(build().run()))
