# The BENCH_* variables of a run and the suite's client profile, for the
# product scripts that drive an engine from the shell (products/*/run.sh).
# One copy, so that every such engine checks and reports the profile alike.
# POSIX sh, to be sourced after setting `bench_product` to the product's
# name, which starts every refusal:
#   bench_product=NAME
#   . "$dir/../common/sh/bench_env.sh"
# Each reader sets `value`; a missing or malformed variable ends the script
# with one line on standard error naming it.

# need NAME: the variable's value; unset and empty are both refused.
need() {
  eval "value=\${$1:-}"
  if [ -z "$value" ]; then
    echo "$bench_product: $1 is not set (the suite sets it)" >&2
    exit 1
  fi
}

# need_int NAME MINIMUM: the variable as a whole number of at least MINIMUM.
need_int() {
  need "$1"
  case "$value" in
    *[!0-9]*) echo "$bench_product: $1 \`$value\` is not an integer >= $2" >&2; exit 1 ;;
  esac
  if [ "$value" -lt "$2" ]; then
    echo "$bench_product: $1 \`$value\` is below $2" >&2
    exit 1
  fi
}

# need_choice NAME CHOICE...: the variable's value, one of the CHOICEs.
need_choice() {
  name=$1
  shift
  need "$name"
  for choice in "$@"; do
    [ "$value" = "$choice" ] && return 0
  done
  echo "$bench_product: $name \`$value\` is not one of $*" >&2
  exit 1
}

# read_client_profile: the suite's client profile (bench.yaml `client:`),
# into fetch_min_bytes, fetch_max_wait_ms, max_partition_fetch_bytes,
# linger_ms, acks, idempotence and compression.
read_client_profile() {
  need_int BENCH_FETCH_MIN_BYTES 1; fetch_min_bytes=$value
  need_int BENCH_FETCH_MAX_WAIT_MS 0; fetch_max_wait_ms=$value
  need_int BENCH_MAX_PARTITION_FETCH_BYTES 1; max_partition_fetch_bytes=$value
  need_int BENCH_LINGER_MS 0; linger_ms=$value
  need_choice BENCH_ACKS all 1 0; acks=$value
  need_choice BENCH_ENABLE_IDEMPOTENCE true false; idempotence=$value
  need_choice BENCH_COMPRESSION none gzip snappy lz4 zstd; compression=$value
}

# check_idempotence WHY: refuses acks 1 or 0 when `idempotence` is true, a
# pair the Kafka clients refuse; WHY says what makes the producer idempotent.
check_idempotence() {
  if [ "$idempotence" = true ] && [ "$acks" != all ]; then
    echo "$bench_product: BENCH_ACKS \`$acks\` does not go with an idempotent producer ($1), which needs acks all" >&2
    exit 1
  fi
}

# print_client_config [COMMIT_INTERVAL_MS]: the "effective client config"
# line of the profile as the script passed it to the engine (these engines
# report no client configuration back), with commit_interval_ms if given.
print_client_config() {
  printf 'effective client config: {"fetch_min_bytes": %s, "fetch_max_wait_ms": %s, "max_partition_fetch_bytes": %s, "linger_ms": %s, "acks": "%s", "enable_idempotence": %s, "compression": "%s"' \
    "$fetch_min_bytes" "$fetch_max_wait_ms" "$max_partition_fetch_bytes" "$linger_ms" "$acks" "$idempotence" "$compression"
  if [ $# -gt 0 ]; then
    printf ', "commit_interval_ms": %s' "$1"
  fi
  printf '}\n'
}
