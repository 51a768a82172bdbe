#!/bin/sh
# Runs the stateless workload on RisingWave: starts a single-node instance
# with its data in a temporary folder, waits for its SQL port, creates the
# source and the sink from stateless.sql with the run's BENCH_* settings (the
# client profile included), prints the client settings it passed as
# "effective client config: {JSON}", then stays until SIGTERM.
# Usage: run.sh RISINGWAVE_BINARY PRODUCT_DIR
set -eu
bin=$1
dir=$2
port=4566

# The suite's client profile and the BENCH_* readers (need, need_int, ...).
bench_product=risingwave
. "$dir/../common/sh/bench_env.sh"
read_client_profile
check_idempotence "BENCH_ENABLE_IDEMPOTENCE true"

work=$(mktemp -d "${TMPDIR:-/tmp}/risingwave-run-XXXXXX")
"$bin" single_node --store-directory "$work/store" >&2 &
child=$!
trap 'kill -TERM "$child" 2>/dev/null; wait "$child"; rm -rf "$work"; exit 0' TERM INT
tries=0
until psql -h 127.0.0.1 -p "$port" -d dev -U root -c 'SELECT 1' >/dev/null 2>&1; do
  tries=$((tries + 1))
  if [ "$tries" -gt 600 ] || ! kill -0 "$child" 2>/dev/null; then
    echo "risingwave: no SQL connection on port $port" >&2
    exit 1
  fi
  sleep 0.1
done
sed -e "s|@BOOTSTRAP@|$BENCH_BOOTSTRAP|g" \
    -e "s|@INPUT_TOPIC@|$BENCH_INPUT_TOPIC|g" \
    -e "s|@OUTPUT_TOPIC@|$BENCH_OUTPUT_TOPIC|g" \
    -e "s|@FETCH_MIN_BYTES@|$fetch_min_bytes|g" \
    -e "s|@FETCH_MAX_WAIT_MS@|$fetch_max_wait_ms|g" \
    -e "s|@MAX_PARTITION_FETCH_BYTES@|$max_partition_fetch_bytes|g" \
    -e "s|@LINGER_MS@|$linger_ms|g" \
    -e "s|@ACKS@|$acks|g" \
    -e "s|@ENABLE_IDEMPOTENCE@|$idempotence|g" \
    -e "s|@COMPRESSION@|$compression|g" \
    "$dir/stateless.sql" > "$work/pipeline.sql"
psql -h 127.0.0.1 -p "$port" -d dev -U root -v ON_ERROR_STOP=1 -q -f "$work/pipeline.sql" >&2
# What this script passed to RisingWave (RisingWave does not report its
# clients' configuration back), before the readiness line.
print_client_config
echo "risingwave ready"
wait "$child"
