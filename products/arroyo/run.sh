#!/bin/sh
# Runs the stateless workload on Arroyo: fills the run's BENCH_* settings,
# the client profile included, into stateless.sql and hands it to `arroyo run`
# (a local pipeline cluster in one process tree). Prints the client settings
# it passed as "effective client config: {JSON}".
# Usage: run.sh ARROYO_BINARY PRODUCT_DIR
set -eu
bin=$1
dir=$2

# The suite's client profile. Each variable must be set and valid; the
# message names the one that is not.
need() {
  eval "value=\${$1:-}"
  if [ -z "$value" ]; then
    echo "arroyo: $1 is not set (the suite sets it)" >&2
    exit 1
  fi
}
need_int() {
  need "$1"
  case "$value" in
    *[!0-9]*) echo "arroyo: $1 \`$value\` is not an integer >= $2" >&2; exit 1 ;;
  esac
  if [ "$value" -lt "$2" ]; then
    echo "arroyo: $1 \`$value\` is below $2" >&2
    exit 1
  fi
}
need_choice() {
  name=$1
  shift
  need "$name"
  for choice in "$@"; do
    [ "$value" = "$choice" ] && return 0
  done
  echo "arroyo: $name \`$value\` is not one of $*" >&2
  exit 1
}
need_int BENCH_FETCH_MIN_BYTES 1; fetch_min_bytes=$value
need_int BENCH_FETCH_MAX_WAIT_MS 0; fetch_max_wait_ms=$value
need_int BENCH_MAX_PARTITION_FETCH_BYTES 1; max_partition_fetch_bytes=$value
need_int BENCH_LINGER_MS 0; linger_ms=$value
need_choice BENCH_ACKS all 1 0; acks=$value
need_choice BENCH_ENABLE_IDEMPOTENCE true false; idempotence=$value
need_choice BENCH_COMPRESSION none gzip snappy lz4 zstd; compression=$value
need_int BENCH_COMMIT_INTERVAL_MS 1; commit_interval_ms=$value

case "$BENCH_DELIVERY" in
  exactly-once)
    mode=exactly_once
    # Arroyo's exactly-once sink makes its transactional producers
    # idempotent whatever client_configs says; pass what it applies.
    idempotence=true
    ;;
  *) mode=at_least_once ;;
esac
if [ "$idempotence" = true ] && [ "$acks" != all ]; then
  echo "arroyo: BENCH_ACKS \`$acks\` does not go with an idempotent producer (BENCH_ENABLE_IDEMPOTENCE true, or exactly-once), which needs acks all" >&2
  exit 1
fi
# librdkafka properties, handed to the source's consumer and the sink's
# producer through each table's client_configs.
source_configs="fetch.min.bytes=$fetch_min_bytes,fetch.wait.max.ms=$fetch_max_wait_ms,max.partition.fetch.bytes=$max_partition_fetch_bytes"
sink_configs="linger.ms=$linger_ms,acks=$acks,enable.idempotence=$idempotence,compression.type=$compression"
work=$(mktemp -d "${TMPDIR:-/tmp}/arroyo-run-XXXXXX")
trap 'rm -rf "$work"' EXIT
sed -e "s|@BOOTSTRAP@|$BENCH_BOOTSTRAP|g" \
    -e "s|@INPUT_TOPIC@|$BENCH_INPUT_TOPIC|g" \
    -e "s|@OUTPUT_TOPIC@|$BENCH_OUTPUT_TOPIC|g" \
    -e "s|@GROUP_ID@|$BENCH_GROUP_ID|g" \
    -e "s|@COMMIT_MODE@|$mode|g" \
    -e "s|@SOURCE_CLIENT_CONFIGS@|$source_configs|g" \
    -e "s|@SINK_CLIENT_CONFIGS@|$sink_configs|g" \
    "$dir/stateless.sql" > "$work/pipeline.sql"
# Checkpoints commit the sink's transactions (exactly_once) and the source's
# offsets to the consumer group.
export ARROYO__DEFAULT_CHECKPOINT_INTERVAL="${commit_interval_ms}ms"
# What this script passed to Arroyo (Arroyo does not report its clients'
# configuration back), before Arroyo's own readiness line.
printf 'effective client config: {"fetch_min_bytes": %s, "fetch_max_wait_ms": %s, "max_partition_fetch_bytes": %s, "linger_ms": %s, "acks": "%s", "enable_idempotence": %s, "compression": "%s", "commit_interval_ms": %s}\n' \
  "$fetch_min_bytes" "$fetch_max_wait_ms" "$max_partition_fetch_bytes" "$linger_ms" "$acks" "$idempotence" "$compression" "$commit_interval_ms"
# `arroyo run` logs "Pipeline running" once the job is up; its log goes to
# standard output so the suite sees that line.
"$bin" run --state-dir "$work/state" --parallelism "$BENCH_PARALLELISM" "$work/pipeline.sql" 2>&1 &
child=$!
trap 'kill -TERM "$child" 2>/dev/null; wait "$child"; rm -rf "$work"; exit 0' TERM INT
wait "$child"
