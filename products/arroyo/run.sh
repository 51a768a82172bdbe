#!/bin/sh
# Runs the stateless workload on Arroyo: fills the run's BENCH_* settings into
# stateless.sql and hands it to `arroyo run` (a local pipeline cluster in one
# process tree). Usage: run.sh ARROYO_BINARY PRODUCT_DIR
set -eu
bin=$1
dir=$2
case "$BENCH_DELIVERY" in
  exactly-once) mode=exactly_once ;;
  *) mode=at_least_once ;;
esac
work=$(mktemp -d "${TMPDIR:-/tmp}/arroyo-run-XXXXXX")
trap 'rm -rf "$work"' EXIT
sed -e "s|@BOOTSTRAP@|$BENCH_BOOTSTRAP|g" \
    -e "s|@INPUT_TOPIC@|$BENCH_INPUT_TOPIC|g" \
    -e "s|@OUTPUT_TOPIC@|$BENCH_OUTPUT_TOPIC|g" \
    -e "s|@GROUP_ID@|$BENCH_GROUP_ID|g" \
    -e "s|@COMMIT_MODE@|$mode|g" \
    "$dir/stateless.sql" > "$work/pipeline.sql"
# Checkpoints commit the sink's transactions (exactly_once) and the source's
# offsets to the consumer group.
export ARROYO__DEFAULT_CHECKPOINT_INTERVAL="${BENCH_COMMIT_INTERVAL_MS}ms"
# `arroyo run` logs "Pipeline running" once the job is up; its log goes to
# standard output so the suite sees that line.
"$bin" run --state-dir "$work/state" --parallelism "$BENCH_PARALLELISM" "$work/pipeline.sql" 2>&1 &
child=$!
trap 'kill -TERM "$child" 2>/dev/null; wait "$child"; rm -rf "$work"; exit 0' TERM INT
wait "$child"
