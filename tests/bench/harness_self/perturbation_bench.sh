#!/bin/sh
# Bench, not a timed test: how much the 1 Hz telemetry perturbs the canaries. One fresh local
# guest (`harness vm exec`, TCG without /dev/kvm) runs PAIRS matched pairs of the same
# static-zram case (bench_case.sh: same pressure, same seeds; the controller never acts), one
# case of each pair with telemetry as configured (telemetry_period_ms 1000, "on") and one at
# 0.1 Hz (10000, "off"; trigger.window_ms set equal, as the spec requires), the order
# alternated from pair to pair (on first in odd pairs, off first in even ones). Prints, per
# canary, the p99 response time of the requests scheduled in the pressure phase of each case
# and the ratio on/off: the geometric mean of the pair ratios with a 95% bootstrap percentile
# interval over pairs (perturbation.py; goal: upper bound < 1.05).
# DISCARD_FIRST=1 (the default) runs one more case of the same spec before the pairs and leaves it
# out of the figures, so that the cold start of a fresh boot (the canary DB and the binaries not
# yet in the page cache, zram never used) falls in no pair's arm.
# Exits non-zero when a case did not complete (the smoke test's check), never on the numbers.
#
# Usage: tests/bench/harness_self/perturbation_bench.sh [BUILD_DIR=build] [OUT_DIR=/tmp/harness-perturbation-bench]
#        PAIRS=6, WARMUP_S=10, PRESSURE_S=60, RECOVERY_S=10, BOOTSTRAP_B=10000, DISCARD_FIRST=1;
#        HARNESS_VM_CACHE=DIR is passed as `harness vm --cache` (an image built there).
set -eu
BUILD=${1:-build}
OUT=${2:-/tmp/harness-perturbation-bench}
PAIRS=${PAIRS:-6}
WARMUP_S=${WARMUP_S:-10}
PRESSURE_S=${PRESSURE_S:-60}
RECOVERY_S=${RECOVERY_S:-10}
DISCARD_FIRST=${DISCARD_FIRST:-1}
# Both arms start and stop pressure-gen at the same ticks only when the phase boundaries fall
# on 0.1 Hz ticks too (pressure-gen starts at the first tick at or after the pressure start).
[ $((WARMUP_S % 10)) -eq 0 ] && [ $((PRESSURE_S % 10)) -eq 0 ] ||
  { echo "WARMUP_S and PRESSURE_S must be multiples of 10 s" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/bench_case.sh"
HARNESS=$BUILD/harness/cli/harness
[ -x "$HARNESS" ] || { echo "no $HARNESS: build first" >&2; exit 2; }
rm -rf "$OUT"; mkdir -p "$OUT/collect"
# case_lines PAIR ARM ID PERIOD_MS: the guest script's lines that write case ID's spec (telemetry every
# PERIOD_MS), run it and append "PAIR ARM ID EXIT" to /out/cases.txt (read by perturbation.py).
case_lines() {
  echo "cat > /out/$3.json <<'JSON'"
  bench_spec_json "$3" "$WARMUP_S" "$PRESSURE_S" "$RECOVERY_S" "$4"
  echo "JSON"
  echo "harness case run --spec /out/$3.json --out /out/bundles --min-free-disk-mib 64 > /out/$3.stdout 2> /out/$3.stderr; echo \"$1 $2 $3 \$?\" >> /out/cases.txt"
}
{
  echo "mkdir -p /out/bundles; : > /out/cases.txt"
  # pair 0: run, checked, not counted (perturbation.py)
  [ "$DISCARD_FIRST" = 1 ] && case_lines 0 discard perturb-discard 1000
  i=1
  while [ "$i" -le "$PAIRS" ]; do
    if [ $((i % 2)) -eq 1 ]; then order="on off"; else order="off on"; fi
    for arm in $order; do
      [ "$arm" = on ] && period=1000 || period=10000
      case_lines "$i" "$arm" "perturb-p$i-$arm" "$period"
    done
    i=$((i + 1))
  done
} > "$OUT/script.sh"
CACHE_ARG=""
[ -n "${HARNESS_VM_CACHE:-}" ] && CACHE_ARG="--cache $HARNESS_VM_CACHE"
"$HARNESS" vm $CACHE_ARG exec --script "$OUT/script.sh" --collect "$OUT/collect" \
  --timeout-s $(((2 * PAIRS + DISCARD_FIRST) * (WARMUP_S + PRESSURE_S + RECOVERY_S + 90) + 300)) > "$OUT/exec.log" 2>&1 || true
grep -m1 -i "accel" "$OUT/exec.log" || true
/usr/bin/python3 "$HERE/perturbation.py" "$OUT/collect" "${BOOTSTRAP_B:-10000}"
