"""FastStream (aiokafka) on the stateless workload, configured by the suite's BENCH_* variables.

A batch subscriber reads the input topic from the earliest offset with the
run's consumer group. Each batch's eu-* events are enriched and published to
the output topic as one batch, and the handler returns once the broker has
acknowledged it. Only then does FastStream's AckPolicy.ACK commit the batch's
input offsets: at-least-once, one commit per batch. Prints "faststream ready"
once the group has assigned it its input partitions; SIGTERM stops it after
the batch in hand.
"""

import asyncio
import logging
import os
import sys

from aiokafka import ConsumerRebalanceListener
from faststream import AckPolicy, FastStream
from faststream.kafka import KafkaBroker

READY_LINE = "faststream ready"
# A batch closes after 10 ms without records, as in the in-house pipeline;
# at most 1000 input records, so that its outputs (about 170 bytes each) fit
# one producer batch.
BATCH_TIMEOUT_MS = 10
BATCH_MAX_RECORDS = 1000
PRODUCER_BATCH_BYTES = 1024 * 1024


def env(name):
    value = os.environ.get(name)
    if not value:
        sys.exit(f"faststream: {name} is not set (the suite sets it)")
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


class ReadyListener(ConsumerRebalanceListener):
    """Prints the readiness line at the first assignment of partitions."""

    def __init__(self):
        self.ready = False

    async def on_partitions_revoked(self, revoked):
        pass

    async def on_partitions_assigned(self, assigned):
        if assigned and not self.ready:
            self.ready = True
            print(READY_LINE, flush=True)


def build():
    delivery = env("BENCH_DELIVERY")
    if delivery != "at-least-once":
        sys.exit(f"faststream: delivery `{delivery}` is not offered (at-least-once only)")
    output_topic = env("BENCH_OUTPUT_TOPIC")
    broker = KafkaBroker(
        env("BENCH_BOOTSTRAP"),
        acks="all",
        enable_idempotence=True,
        linger_ms=5,
        compression_type="lz4",
        max_batch_size=PRODUCER_BATCH_BYTES,
        # The suite creates the run's topics.
        allow_auto_create_topics=False,
        # Within the suite's grace period after SIGTERM.
        graceful_timeout=5.0,
        # FastStream logs every batch ("Received", "Processed") at this
        # level; at DEBUG they are not written, as in a production service.
        log_level=logging.DEBUG,
    )

    @broker.subscriber(
        env("BENCH_INPUT_TOPIC"),
        batch=True,
        group_id=env("BENCH_GROUP_ID"),
        auto_offset_reset="earliest",
        isolation_level="read_committed",
        ack_policy=AckPolicy.ACK,
        batch_timeout_ms=BATCH_TIMEOUT_MS,
        max_records=BATCH_MAX_RECORDS,
        fetch_min_bytes=65536,
        fetch_max_wait_ms=10,
        max_partition_fetch_bytes=52428800,
        listener=ReadyListener(),
    )
    async def stateless(events: list[dict]) -> None:
        outputs = [enrich(e) for e in events if e["region"].startswith("eu-")]
        if outputs:
            # Waits for the broker's acknowledgement of the whole batch.
            await broker.publish_batch(*outputs, topic=output_topic)

    return FastStream(broker)


if __name__ == "__main__":
    asyncio.run(build().run())
