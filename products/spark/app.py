"""Apache Spark Structured Streaming (PySpark) on the suite's stateless workload,
configured by the suite's BENCH_* variables.

Usage: app.py INSTALL_DIR (the suite's install folder; Spark's Kafka connector
and its dependencies are the jars in INSTALL_DIR/jars).

Runs Spark in local mode inside one JVM (local[N], N = BENCH_PARALLELISM: each input partition is
one task per batch) and one streaming query, all in the JVM (no Python UDF):
Kafka source from the earliest offset, from_json of the six fields the
workload needs, a filter on region "eu-*", latency_ratio and sla_status
added, to_json, Kafka sink. BENCH_SETTINGS' "trigger" picks the query's
trigger: "micro-batch" (the default trigger: a batch starts as soon as the
previous one ends) or "real-time" (Spark's real-time mode: long-running
batches of BENCH_SETTINGS' "batch_duration_ms" in which each record is
processed and written as it arrives). Structured Streaming keeps its position
in its checkpoint (a folder per consumer group under the temporary folder,
removed on a clean exit) and never commits to the consumer group, so the app
does: it commits the end offsets of the newest finished batch (whose output
the sink has flushed and had acknowledged) to BENCH_GROUP_ID with a Kafka
consumer of its own, looking for one about every BENCH_COMMIT_INTERVAL_MS
(micro-batch) or every 100 ms (real-time, whose batches end every
batch_duration_ms). The suite's client profile (BENCH_FETCH_MIN_BYTES, ...,
BENCH_COMPRESSION) goes to the source's and the sink's Kafka clients as
kafka.-prefixed options; their consumers assign their partitions and join no
group, so BENCH_SESSION_TIMEOUT_MS and BENCH_GROUP_INSTANCE_ID do not apply.
Once the query can process (its first batch has finished, or its first
trigger found the input empty), prints "effective client config: {JSON}" (the
options parsed back by kafka-clients' ConsumerConfig and ProducerConfig, and
under "engine" the engine settings applied) and then "spark ready". SIGTERM
stops the query, commits its last finished batch and stops Spark.
"""

import json
import os
import shutil
import signal
import sys
import tempfile
import threading

# The Python apps' shared helpers: products/common/python/bench_common.py.
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "common", "python")))
import bench_common  # noqa: E402
from bench_common import KEPT_REGION_PREFIX, BenchEnv, ClientProfile  # noqa: E402

READY_LINE = "spark ready"
CONFIG_LINE = "effective client config: "

TRIGGERS = ("micro-batch", "real-time")
# Spark's own floor for a real-time batch
# (spark.sql.streaming.realTimeMode.minBatchDuration's default, 5 s).
REAL_TIME_MIN_BATCH_MS = 5000
# How often, in real-time mode, the app looks for a newly finished batch to
# commit: a batch's offsets reach the group at most this long after it ends.
REAL_TIME_COMMIT_POLL_MS = 100

env = BenchEnv("spark")


def client_profile():
    """The suite's client profile as the Java client's settings (Spark
    passes its kafka.-prefixed options on to kafka-clients without the
    prefix)."""
    profile = ClientProfile.from_env(env)
    consumer = {
        "fetch.min.bytes": str(profile.fetch_min_bytes),
        "fetch.max.wait.ms": str(profile.fetch_max_wait_ms),
        "max.partition.fetch.bytes": str(profile.max_partition_fetch_bytes),
        "isolation.level": "read_committed",
    }
    producer = {
        "linger.ms": str(profile.linger_ms),
        "acks": profile.acks,
        "enable.idempotence": "true" if profile.enable_idempotence else "false",
        "compression.type": profile.compression,
    }
    return consumer, producer


def java_map(jvm, entries):
    result = jvm.java.util.HashMap()
    for key, value in entries.items():
        result.put(key, value)
    return result


def effective_config(jvm, consumer, producer, commit_interval_ms, engine):
    """The profile as kafka-clients reads it: the options Spark hands to its
    consumers and producers, parsed by ConsumerConfig and ProducerConfig
    (which refuse what KafkaConsumer and KafkaProducer would refuse, such as
    acks 1 or 0 with idempotence on); commit_interval_ms only when the app
    commits on that cadence (micro-batch: real-time mode commits once a
    batch); the engine settings applied under "engine"."""
    kafka = jvm.org.apache.kafka.clients
    serde = "org.apache.kafka.common.serialization.ByteArray"
    consumer_config = kafka.consumer.ConsumerConfig(java_map(jvm, {
        **consumer,
        "key.deserializer": serde + "Deserializer",
        "value.deserializer": serde + "Deserializer",
    }))
    producer_config = kafka.producer.ProducerConfig(java_map(jvm, {
        **producer,
        "key.serializer": serde + "Serializer",
        "value.serializer": serde + "Serializer",
    }))
    acks = str(producer_config.getString("acks"))
    config = {
        "fetch_min_bytes": consumer_config.getInt("fetch.min.bytes"),
        "fetch_max_wait_ms": consumer_config.getInt("fetch.max.wait.ms"),
        "max_partition_fetch_bytes": consumer_config.getInt("max.partition.fetch.bytes"),
        "linger_ms": producer_config.getLong("linger.ms"),
        "acks": "all" if acks == "-1" else acks,
        "enable_idempotence": producer_config.getBoolean("enable.idempotence"),
        "compression": str(producer_config.getString("compression.type")),
    }
    if commit_interval_ms is not None:
        config["commit_interval_ms"] = commit_interval_ms
    config["engine"] = engine
    return config


def real_time_batch_ms(settings):
    """BENCH_SETTINGS' batch_duration_ms: real-time mode's batch duration, in
    ms (product.yaml's `settings:`; a batch line's product.KEY=VALUE may
    override it)."""
    value = settings.get("batch_duration_ms")
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        sys.exit(
            f"spark: the real-time trigger needs settings.batch_duration_ms, a whole number of ms >= 1, got {value!r}"
        )
    return value


class GroupCommitter:
    """Commits the end offsets of the query's newest finished batch to the
    consumer group, with a KafkaConsumer of the app's own (no subscription,
    no group membership: a plain offset commit, as Spark's own consumers,
    which assign their partitions, never commit)."""

    def __init__(self, jvm, bootstrap, group):
        self.jvm = jvm
        serde = "org.apache.kafka.common.serialization.ByteArrayDeserializer"
        props = jvm.java.util.Properties()
        for key, value in {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "enable.auto.commit": "false",
            "key.deserializer": serde,
            "value.deserializer": serde,
        }.items():
            props.setProperty(key, value)
        self.consumer = jvm.org.apache.kafka.clients.consumer.KafkaConsumer(props)
        self.committed = None

    def commit(self, query):
        """Commits the newest finished batch's end offsets, if they moved.
        A batch's progress is reported once its Kafka writers have flushed
        their producers and every record is acknowledged."""
        progress = query.lastProgress
        if not progress or not progress["sources"]:
            return
        end = progress["sources"][0]["endOffset"]
        if isinstance(end, str):
            end = json.loads(end)
        if not end or end == self.committed:
            return
        offsets = self.jvm.java.util.HashMap()
        for topic, partitions in end.items():
            for partition, offset in partitions.items():
                offsets.put(
                    self.jvm.org.apache.kafka.common.TopicPartition(topic, int(partition)),
                    self.jvm.org.apache.kafka.clients.consumer.OffsetAndMetadata(int(offset)),
                )
        self.consumer.commitSync(offsets)
        self.committed = end

    def close(self):
        self.consumer.close()


def stateless(source):
    """eu-* events, enriched, one JSON object each: the six fields the
    workload reads are decoded (from_json with a schema of six of the
    nineteen), the rest of each event is skipped by the parser."""
    from pyspark.sql import functions as F

    schema = (
        "seq BIGINT, ts_us BIGINT, region STRING, service STRING, "
        "latency_ms BIGINT, sla_ms BIGINT"
    )
    events = source.select(F.from_json(F.col("value").cast("string"), schema).alias("e")).select("e.*")
    ratio = F.col("latency_ms") / F.col("sla_ms")
    enriched = events.where(F.col("region").startswith(KEPT_REGION_PREFIX)).select(
        "seq", "ts_us", "region", "service", "latency_ms", "sla_ms",
        ratio.alias("latency_ratio"),
        F.when(ratio > 1, F.lit("breach")).otherwise(F.lit("ok")).alias("sla_status"),
    )
    return enriched.select(F.to_json(F.struct(*enriched.columns)).alias("value"))


def wait_until_first_trigger(query, stop):
    """Returns once the query can process: its first batch has finished (on
    an empty input, batch 0 plans the source's starting offsets and reads
    nothing), or its first trigger found no data to wait for. start() alone
    returns before the source exists, and a ready line printed then let the
    load pile up while Spark was still planning."""
    while not stop.wait(0.05):
        if not query.isActive:
            raise SystemExit(f"spark: the query stopped: {query.exception()}")
        if query.lastProgress is not None:
            return
        if query.status["message"].startswith("Waiting for data"):
            return


def log_cadence(query):
    """Logs the cadence of the query's recent batches that had input (Spark
    keeps the progress of the last 100) on standard error: the median of
    each part of a batch's time, in ms, and of its input rows."""
    batches = [p for p in query.recentProgress if p["numInputRows"] > 0]
    if not batches:
        return

    def median(values):
        values = sorted(values)
        return values[len(values) // 2]

    parts = {
        key: median(p["durationMs"].get(key, 0) for p in batches)
        for key in batches[-1]["durationMs"]
    }
    rows = median(p["numInputRows"] for p in batches)
    print(
        f"spark: last {len(batches)} batches with input, medians: {json.dumps(parts)} ms, "
        f"{rows} input rows",
        file=sys.stderr,
        flush=True,
    )


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: app.py INSTALL_DIR")
    jars_dir = os.path.join(sys.argv[1], "jars")
    jars = sorted(os.path.join(jars_dir, j) for j in os.listdir(jars_dir) if j.endswith(".jar"))
    workload = env("BENCH_WORKLOAD")
    if workload != "stateless":
        sys.exit(f"spark: workload `{workload}` is not implemented")
    if env("BENCH_DELIVERY") != "at-least-once":
        sys.exit(f"spark: BENCH_DELIVERY `{env('BENCH_DELIVERY')}` is not offered (at-least-once only)")
    settings = json.loads(os.environ.get("BENCH_SETTINGS") or "{}")
    unknown = sorted(set(settings) - {"trigger", "batch_duration_ms"})
    if unknown:
        sys.exit(f"spark: unknown settings {', '.join(unknown)} (known: trigger, batch_duration_ms)")
    trigger = settings.get("trigger", "micro-batch")
    if trigger not in TRIGGERS:
        sys.exit(f"spark: trigger `{trigger}` is not one of {', '.join(TRIGGERS)}")
    if trigger != "real-time" and "batch_duration_ms" in settings:
        sys.exit("spark: settings.batch_duration_ms applies to the real-time trigger only")
    bootstrap = env("BENCH_BOOTSTRAP")
    group = env("BENCH_GROUP_ID")
    commit_interval_ms = env.integer("BENCH_COMMIT_INTERVAL_MS", 1)
    # Task slots: local[N]. The Kafka source reads each input partition as
    # one task, so N slots run up to N partitions' tasks at once.
    parallelism = env.integer("BENCH_PARALLELISM", 1)
    partitions = env.integer("BENCH_INPUT_PARTITIONS", 1)
    if trigger == "real-time" and parallelism < partitions:
        sys.exit(
            f"spark: real-time mode runs every input partition as a task that never ends, so it needs "
            f"parallelism (local[N]) of at least the input's {partitions} partitions; got {parallelism}"
        )
    # Embedded: local[N] in the driver's JVM. Cluster: the standalone master
    # the suite started (cluster.sh), whose workers each offer N cores and
    # start one executor of N cores for this application.
    on_cluster = env.choice("BENCH_DEPLOYMENT", ("embedded", "cluster")) == "cluster"
    workers = env.integer("BENCH_COUNT_WORKER", 1) if on_cluster else 1
    if on_cluster:
        master = f"spark://127.0.0.1:{env.integer('BENCH_PORT_MASTER', 1)}"
        parallelism *= workers
    else:
        master = f"local[{parallelism}]"
    consumer, producer = client_profile()
    batch_ms = real_time_batch_ms(settings) if trigger == "real-time" else None
    # Real-time mode's batches may not be shorter than this (Spark refuses
    # them): Spark's own floor, lowered only for a batch duration asked below
    # it (a sweep; Spark's documentation gives 5 s as the minimum).
    min_batch_ms = min(REAL_TIME_MIN_BATCH_MS, batch_ms) if batch_ms is not None else None
    if batch_ms is not None and batch_ms < REAL_TIME_MIN_BATCH_MS:
        print(
            f"spark: batch_duration_ms {batch_ms} is below Spark's minimum real-time batch of "
            f"{REAL_TIME_MIN_BATCH_MS} ms; spark.sql.streaming.realTimeMode.minBatchDuration lowered to it",
            file=sys.stderr,
            flush=True,
        )

    # The suite stops the whole process group with SIGTERM. The JVM that
    # PySpark starts inherits an ignored SIGTERM and then installs no
    # handler of its own (HotSpot leaves an ignored shutdown signal
    # ignored), so it is this process that stops the query and Spark.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    from pyspark.sql import SparkSession

    # The checkpoint of this consumer group's query: a restart of the same
    # run resumes from it; removed on a clean exit.
    checkpoint = os.path.join(tempfile.gettempdir(), "streamsuite-spark", group)
    log4j = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")
    builder = (
        SparkSession.builder.master(master)
        .appName("streamsuite-spark")
        .config("spark.jars", ",".join(jars))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "1g")
        .config(
            "spark.driver.extraJavaOptions",
            f"-XX:+UseSerialGC -Dlog4j2.configurationFile=file:{log4j}",
        )
        .config("spark.sql.shuffle.partitions", str(parallelism))
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.streaming.stopTimeout", "5s")
    )
    if on_cluster:
        builder = (
            builder.config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.cores.max", str(parallelism))
            .config("spark.executor.cores", str(parallelism // workers))
            .config("spark.executor.memory", "1g")
            .config(
                "spark.executor.extraJavaOptions",
                f"-XX:+UseSerialGC -Dlog4j2.configurationFile=file:{log4j}",
            )
        )
    if min_batch_ms is not None and min_batch_ms < REAL_TIME_MIN_BATCH_MS:
        builder = builder.config("spark.sql.streaming.realTimeMode.minBatchDuration", str(min_batch_ms))
    spark = builder.getOrCreate()
    # Python workers (started for Python UDFs, none in this query) run
    # outside this process and do not see its sys.path: the shared module
    # goes to them as a Spark file, which each worker puts on its path.
    spark.sparkContext.addPyFile(bench_common.__file__)
    jvm = spark.sparkContext._jvm

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())

    def kafka_options(options):
        return {f"kafka.{key}": value for key, value in options.items()}

    if trigger == "real-time":
        engine = {
            "trigger": trigger,
            "batch_duration_ms": batch_ms,
            "min_batch_duration_ms": min_batch_ms,
            "output_mode": "update",
            "async_progress_tracking": False,
            "group_commit": "each finished batch",
            "master": master,
        }
    else:
        engine = {
            "trigger": trigger,
            "processing_time_ms": 0,
            "async_progress_tracking": True,
            "async_progress_tracking_checkpoint_interval_ms": commit_interval_ms,
            "group_commit_interval_ms": commit_interval_ms,
            "master": master,
        }
    config = effective_config(
        jvm,
        consumer,
        producer,
        commit_interval_ms if trigger == "micro-batch" else None,
        engine,
    )
    source = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("kafka.group.id", group)
        .option("subscribe", env("BENCH_INPUT_TOPIC"))
        .option("startingOffsets", "earliest")
        .options(**kafka_options(consumer))
        .load()
    )
    writer = (
        stateless(source)
        .writeStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", env("BENCH_OUTPUT_TOPIC"))
        .options(**kafka_options(producer))
        .option("checkpointLocation", checkpoint)
        .queryName("stateless")
    )
    if trigger == "real-time":
        # The batch duration is a checkpoint interval, not a latency target:
        # records are processed as they arrive, and a batch's end is when its
        # offsets are checkpointed and can be committed to the group. Spark
        # 4.2 refuses asynchronous progress tracking in real-time mode.
        writer = writer.outputMode("update").trigger(realTime=f"{batch_ms} milliseconds")
    else:
        # Offsets and commit logs written asynchronously, every commit
        # interval, instead of twice per batch on the batch's path.
        writer = writer.option("asyncProgressTrackingEnabled", "true").option(
            "asyncProgressTrackingCheckpointIntervalMs", str(commit_interval_ms)
        )
    committer = GroupCommitter(jvm, bootstrap, group)
    clean = False
    try:
        # start() returns once the query's thread runs (the query is
        # active); it then creates its source and reads from the earliest
        # offset, so no record is missed however late that is.
        query = writer.start()
        wait_until_first_trigger(query, stop)
        print(CONFIG_LINE + json.dumps(config), flush=True)
        print(READY_LINE, flush=True)
        poll_ms = REAL_TIME_COMMIT_POLL_MS if trigger == "real-time" else commit_interval_ms
        while not stop.wait(poll_ms / 1000.0):
            if not query.isActive:
                raise SystemExit(f"spark: the query stopped: {query.exception()}")
            committer.commit(query)
        query.stop()
        committer.commit(query)
        log_cadence(query)
        clean = True
    finally:
        committer.close()
        spark.stop()
        if clean:
            shutil.rmtree(checkpoint, ignore_errors=True)


if __name__ == "__main__":
    main()
