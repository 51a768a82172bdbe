#!/usr/bin/env bash
# Renders the report from reports/results and takes the screenshot the README
# shows (docs/report.png): the top of one workload's page, in headless
# Chromium, from a file:// URL. Usage: docs/report-screenshot.sh [WORKLOAD]
set -euo pipefail
cd "$(dirname "$0")/.."
workload=${1:-stateless}
out=target/report-docs
cargo run --release --quiet -- report --out "$out"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
  --disable-component-update --disable-default-apps --disable-sync --no-first-run \
  --hide-scrollbars --user-data-dir="$profile" --window-size=1280,1800 \
  --screenshot="$PWD/docs/report.png" "file://$PWD/$out/$workload.html" 2>/dev/null
echo "docs/report.png from $out/$workload.html"
