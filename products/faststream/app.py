"""FastStream (aiokafka) on the suite's workloads, configured by the suite's BENCH_* variables.

A batch subscriber reads the input topic from the earliest offset with the
run's consumer group, up to 10,000 records a batch, and runs the pipeline
BENCH_WORKLOAD names: stateless enriches each batch's eu-* events;
passthrough takes each record's value bytes as they came (a decoder that
hands FastStream's raw bodies through, no JSON decode) and publishes them
unchanged. windowed-lowcard exits with one line (FastStream has no
windowing), as does any other workload. A batch's outputs are published to
the output topic as producer batches, and the handler returns once the
broker has acknowledged them. Only then does FastStream's AckPolicy.ACK
commit the batch's input offsets: at-least-once, one commit per batch. The
suite's client profile (BENCH_FETCH_MIN_BYTES, ..., BENCH_COMPRESSION) goes
to the subscriber's consumer and the broker's producer as aiokafka
arguments. Once the group has assigned it its input partitions, prints
"effective client config: {JSON}" (read back from the aiokafka consumer and
producer) and then "faststream ready"; SIGTERM stops it after the batch in
hand."""

import asyncio
import json
import logging
import os
import sys

from aiokafka import ConsumerRebalanceListener
from faststream import AckPolicy, FastStream
from faststream.kafka import KafkaBroker

READY_LINE = "faststream ready"
CONFIG_LINE = "effective client config: "
# A batch closes after 10 ms without records, as in the in-house pipeline,
# and holds at most its 10,000 input records.
BATCH_TIMEOUT_MS = 10
BATCH_MAX_RECORDS = 10_000
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

COMPRESSIONS = ("none", "gzip", "snappy", "lz4", "zstd")


def env(name):
    value = os.environ.get(name)
    if not value:
        sys.exit(f"faststream: {name} is not set (the suite sets it)")
    return value


def env_int(name, minimum):
    value = env(name)
    try:
        number = int(value)
    except ValueError:
        sys.exit(f"faststream: {name} `{value}` is not an integer")
    if number < minimum:
        sys.exit(f"faststream: {name} `{value}` is below {minimum}")
    return number


def env_choice(name, choices):
    value = env(name)
    if value not in choices:
        sys.exit(f"faststream: {name} `{value}` is not one of {', '.join(choices)}")
    return value


def client_profile():
    """The suite's client profile (BENCH_* variables) as aiokafka arguments:
    the consumer's for the subscriber, the producer's for the broker (which
    owns the one producer every publish goes through)."""
    consumer = {
        "fetch_min_bytes": env_int("BENCH_FETCH_MIN_BYTES", 1),
        "fetch_max_wait_ms": env_int("BENCH_FETCH_MAX_WAIT_MS", 0),
        "max_partition_fetch_bytes": env_int("BENCH_MAX_PARTITION_FETCH_BYTES", 1),
    }
    acks = env_choice("BENCH_ACKS", ("all", "1", "0"))
    compression = env_choice("BENCH_COMPRESSION", COMPRESSIONS)
    producer = {
        "linger_ms": env_int("BENCH_LINGER_MS", 0),
        "acks": acks if acks == "all" else int(acks),
        "enable_idempotence": env_choice("BENCH_ENABLE_IDEMPOTENCE", ("true", "false")) == "true",
        "compression_type": None if compression == "none" else compression,
    }
    if producer["enable_idempotence"] and acks != "all":
        sys.exit(
            f"faststream: BENCH_ACKS `{acks}` does not go with BENCH_ENABLE_IDEMPOTENCE true "
            "(an idempotent producer needs acks all)"
        )
    return consumer, producer


def effective_config(consumer, producer):
    """The profile as aiokafka holds it, read back from the consumer's
    fetcher and the producer's sender and accumulator (private attributes
    of aiokafka 0.14). No commit_interval_ms: FastStream commits after each
    batch and has no commit interval."""
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
    }


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


def raw_values(message):
    """passthrough's decoder: the batch's value bytes as FastStream's parser
    took them from aiokafka, without its default JSON decode."""
    return message.body


class ReadyListener(ConsumerRebalanceListener):
    """At the first assignment of partitions, prints the effective client
    configuration and then the readiness line."""

    def __init__(self, clients):
        self.clients = clients
        self.ready = False

    async def on_partitions_revoked(self, revoked):
        pass

    async def on_partitions_assigned(self, assigned):
        if assigned and not self.ready:
            self.ready = True
            consumer, producer = self.clients()
            print(CONFIG_LINE + json.dumps(effective_config(consumer, producer)), flush=True)
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
    output_topic = env("BENCH_OUTPUT_TOPIC")
    broker = KafkaBroker(
        env("BENCH_BOOTSTRAP"),
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

    def clients():
        """The subscriber's aiokafka consumer and the broker's producer."""
        return subscriber.consumer, broker.config.producer._producer.producer

    subscriber = broker.subscriber(
        env("BENCH_INPUT_TOPIC"),
        batch=True,
        group_id=env("BENCH_GROUP_ID"),
        auto_offset_reset="earliest",
        isolation_level="read_committed",
        ack_policy=AckPolicy.ACK,
        batch_timeout_ms=BATCH_TIMEOUT_MS,
        max_records=BATCH_MAX_RECORDS,
        **consumer_config,
        listener=ReadyListener(clients),
        decoder=raw_values if workload == "passthrough" else None,
    )

    async def publish(outputs):
        """Hands every part to the producer first, then waits for the
        broker's acknowledgement of all of them."""
        acks = [
            await broker.publish_batch(
                *outputs[start : start + part_records],
                topic=output_topic,
                no_confirm=True,
            )
            for start in range(0, len(outputs), part_records)
        ]
        if acks:
            await asyncio.gather(*acks)

    if workload == "stateless":

        @subscriber
        async def stateless(events: list[dict]) -> None:
            await publish([enrich(e) for e in events if e["region"].startswith("eu-")])

    else:

        @subscriber
        async def passthrough(values: list[bytes]) -> None:
            await publish(values)

    return FastStream(broker)


if __name__ == "__main__":
    asyncio.run(build().run())
