#!/bin/sh
# One process of the cluster deployment's Spark standalone cluster, from
# the Spark that pyspark installed (its jars/ and bin/ are a Spark home):
# the master, or a worker that registers with it and starts the
# application's executors as its own children.
#
# Usage: cluster.sh INSTALL_DIR (role from BENCH_MEMBER_ROLE: master or
# worker; the master's port from BENCH_PORT_MASTER and its web UI's from
# BENCH_PORT_MASTER_UI; a worker offers BENCH_PARALLELISM cores and keeps
# its executors' folders and logs under BENCH_LOG_DIR).
set -eu
install="$1"
dir="$(cd "$(dirname "$0")" && pwd)"
for candidate in "$install"/venv/lib/python*/site-packages/pyspark; do
  SPARK_HOME="$candidate"
done
export SPARK_HOME
# Spark's launcher, which a worker uses to start executors, takes the Scala
# version from a source build unless it is given; pyspark's jars name it.
for core in "$SPARK_HOME"/jars/spark-core_*.jar; do
  SPARK_SCALA_VERSION=$(basename "$core" | sed 's/^spark-core_\([0-9.]*\)-.*/\1/')
done
export SPARK_SCALA_VERSION
jvm="-Xmx512m -XX:+UseSerialGC -XX:+ExitOnOutOfMemoryError -Dlog4j2.configurationFile=file:$dir/log4j2-cluster.properties"
master="spark://127.0.0.1:$BENCH_PORT_MASTER"
case "$BENCH_MEMBER_ROLE" in
  master)
    # shellcheck disable=SC2086
    exec java $jvm -cp "$SPARK_HOME/jars/*" org.apache.spark.deploy.master.Master \
      --host 127.0.0.1 --port "$BENCH_PORT_MASTER" --webui-port "$BENCH_PORT_MASTER_UI"
    ;;
  worker)
    work="$BENCH_LOG_DIR/spark-worker-$BENCH_MEMBER_INDEX"
    mkdir -p "$work"
    # shellcheck disable=SC2086
    exec java $jvm -cp "$SPARK_HOME/jars/*" org.apache.spark.deploy.worker.Worker \
      --host 127.0.0.1 --webui-port 0 --cores "$BENCH_PARALLELISM" --memory 1g \
      --work-dir "$work" "$master"
    ;;
  *)
    echo "spark: unknown cluster role $BENCH_MEMBER_ROLE" >&2
    exit 2
    ;;
esac
