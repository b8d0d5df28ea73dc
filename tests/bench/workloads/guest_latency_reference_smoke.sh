#!/bin/bash
# ctest guest_latency_reference_smoke (labels vm, bench): guest_latency_reference.sh in SHORT
# mode (8 s phases). Fails when the bench fails or its table lacks a row, with a sample count
# and numeric p50/p99/max, for each tool in each phase; it checks that the bench still runs,
# never its numbers.
#   guest_latency_reference_smoke.sh BUILD_DIR OUT_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$1
out=$2
mkdir -p "$(dirname "$out")"
log=$out.log
SHORT=1 bash "$here/guest_latency_reference.sh" "$build" "$out" 2>&1 | tee "$log"
missing=()
for phase in idle pressure; do
  for tool in "canary-compute wake delay" "cyclictest --policy=other"; do
    grep -Eq "^\| $phase +\| $tool [^|]*\| +[1-9][0-9]* \| +[0-9.]+ \| +[0-9.]+ \| +[0-9.]+ \|$" "$log" ||
      missing+=("$phase / $tool")
  done
done
if ((${#missing[@]} > 0)); then
  echo "guest_latency_reference_smoke: the table has no row with a count and numeric p50/p99/max for:" \
    "$(printf '[%s] ' "${missing[@]}")(see $log)" >&2
  exit 1
fi
grep -q "^command: .*accelerator \(kvm\|tcg\)$" "$log" ||
  { echo "guest_latency_reference_smoke: the accelerator is not named (see $log)" >&2; exit 1; }
echo "guest_latency_reference_smoke: 4 rows (2 tools x 2 phases)"
