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

# The suite's client profile. Each variable must be set and valid; the
# message names the one that is not.
need() {
  eval "value=\${$1:-}"
  if [ -z "$value" ]; then
    echo "risingwave: $1 is not set (the suite sets it)" >&2
    exit 1
  fi
}
need_int() {
  need "$1"
  case "$value" in
    *[!0-9]*) echo "risingwave: $1 \`$value\` is not an integer >= $2" >&2; exit 1 ;;
  esac
  if [ "$value" -lt "$2" ]; then
    echo "risingwave: $1 \`$value\` is below $2" >&2
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
  echo "risingwave: $name \`$value\` is not one of $*" >&2
  exit 1
}
need_int BENCH_FETCH_MIN_BYTES 1; fetch_min_bytes=$value
need_int BENCH_FETCH_MAX_WAIT_MS 0; fetch_max_wait_ms=$value
need_int BENCH_MAX_PARTITION_FETCH_BYTES 1; max_partition_fetch_bytes=$value
need_int BENCH_LINGER_MS 0; linger_ms=$value
need_choice BENCH_ACKS all 1 0; acks=$value
need_choice BENCH_ENABLE_IDEMPOTENCE true false; idempotence=$value
need_choice BENCH_COMPRESSION none gzip snappy lz4 zstd; compression=$value
if [ "$idempotence" = true ] && [ "$acks" != all ]; then
  echo "risingwave: BENCH_ACKS \`$acks\` does not go with BENCH_ENABLE_IDEMPOTENCE true (an idempotent producer needs acks all)" >&2
  exit 1
fi

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
printf 'effective client config: {"fetch_min_bytes": %s, "fetch_max_wait_ms": %s, "max_partition_fetch_bytes": %s, "linger_ms": %s, "acks": "%s", "enable_idempotence": %s, "compression": "%s"}\n' \
  "$fetch_min_bytes" "$fetch_max_wait_ms" "$max_partition_fetch_bytes" "$linger_ms" "$acks" "$idempotence" "$compression"
echo "risingwave ready"
wait "$child"
