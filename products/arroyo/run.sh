#!/bin/sh
# Runs the stateless workload on Arroyo: fills the run's BENCH_* settings,
# the client profile included, into stateless.sql and hands it to `arroyo run`
# (a local pipeline cluster in one process tree). Prints the client settings
# it passed as "effective client config: {JSON}".
# Usage: run.sh ARROYO_BINARY PRODUCT_DIR
set -eu
bin=$1
dir=$2

# The suite's client profile and the BENCH_* readers (need, need_int, ...).
bench_product=arroyo
. "$dir/../common/sh/bench_env.sh"
read_client_profile
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
check_idempotence "BENCH_ENABLE_IDEMPOTENCE true, or exactly-once"
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
print_client_config "$commit_interval_ms"
# `arroyo run` logs "Pipeline running" once the job is up; its log goes to
# standard output so the suite sees that line.
"$bin" run --state-dir "$work/state" --parallelism "$BENCH_PARALLELISM" "$work/pipeline.sql" 2>&1 &
child=$!
trap 'kill -TERM "$child" 2>/dev/null; wait "$child"; rm -rf "$work"; exit 0' TERM INT
wait "$child"
