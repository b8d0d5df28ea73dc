#!/bin/sh
# Bench, not a timed test: the harness's own CPU time and RSS in a guest during a case, as
# a fraction of the vCPU (goal: <= 0.25% of the vCPU over the measured phases and
# <= 16 MiB RSS; harness/case/SPEC.md v2 `harness_self`). Boots a fresh local guest
# (`harness vm exec`, TCG without /dev/kvm), runs one static-zram case (bench_case.sh) and
# samples the executor from outside every second (/proc/<pid>/stat utime+stime,
# /proc/<pid>/status VmRSS/VmHWM/RssAnon/RssFile/RssShmem; the guest runs
# from an initramfs, so the executable's mapped pages count as RssShmem), then prints, side by side with the
# executor's own outcome_json.harness_self: the start-up CPU (process start to the first
# tick), the CPU per second over the measured phases (first to last tick) and what came after,
# peak RSS, and the telemetry sample's own cost (extra_json.sample_cpu_ns, read_duration_ns).
# Exits non-zero when the case did not complete or no sample was taken (the smoke test's check).
#
# EXECUTORS (default "harness-case harness") names the executables that run the case, one
# after the other in the same guest: harness-case is what the agent starts, harness the full
# CLI it replaced; with two, footprint.py ends with their figures side by side.
#
# Usage: tests/bench/harness_self/run_bench.sh [BUILD_DIR=build] [OUT_DIR=/tmp/harness-self-bench]
#        PRESSURE_S=60 (pressure phase), WARMUP_S=10, RECOVERY_S=10, EXECUTORS="harness-case harness";
#        HARNESS_VM_CACHE=DIR is passed as `harness vm --cache` (an image built there; with
#        `harness` among EXECUTORS it must be built with `vm image --with-cli`, since without it
#        the guest's `harness` is the script that runs harness-case: the script refuses such an
#        image rather than measure harness-case twice).
# No agent runs here (`harness vm exec` starts the executor itself); in a campaign the agent is
# the executor's parent and outcome_json.harness_self adds its CPU and RSS (harness_self.hpp).
set -eu
BUILD=${1:-build}
OUT=${2:-/tmp/harness-self-bench}
PRESSURE_S=${PRESSURE_S:-60}
WARMUP_S=${WARMUP_S:-10}
RECOVERY_S=${RECOVERY_S:-10}
EXECUTORS=${EXECUTORS:-harness-case harness}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/bench_case.sh"
HARNESS=$BUILD/harness/cli/harness
[ -x "$HARNESS" ] || { echo "no $HARNESS: build first" >&2; exit 2; }
rm -rf "$OUT"; mkdir -p "$OUT/collect"
{
  echo "cat > /out/spec.json <<'JSON'"
  bench_spec_json bench-harness-self "$WARMUP_S" "$PRESSURE_S" "$RECOVERY_S" 1000
  echo "JSON"
  echo "field() { grep \"^\$1:\" /proc/\$pid/status | tr -s ' \\t' ' ' | cut -d' ' -f2; }"
  for exe in $EXECUTORS; do
    # One case per executor; its bundle in /out/bundles/EXE, its samples in /out/samples-EXE.txt.
    sed "s/@EXE@/$exe/g" <<'SCRIPT'
mkdir -p /out/bundles/@EXE@
@EXE@ case run --spec /out/spec.json --out /out/bundles/@EXE@ --min-free-disk-mib 64 > /out/case-@EXE@.stdout 2> /out/case-@EXE@.stderr &
pid=$!
: > /out/samples-@EXE@.txt
while kill -0 $pid 2>/dev/null; do
  # uptime_s utime stime (ticks) VmRSS VmHWM RssAnon RssFile RssShmem (kB)
  if [ -r /proc/$pid/stat ]; then
    set -- $(cat /proc/$pid/stat)
    echo "$(cut -d' ' -f1 /proc/uptime) ${14} ${15} $(field VmRSS) $(field VmHWM) $(field RssAnon) $(field RssFile) $(field RssShmem)" >> /out/samples-@EXE@.txt
  fi
  sleep 1
done
wait $pid; echo $? > /out/case-@EXE@.rc
SCRIPT
  done
  echo "getconf CLK_TCK > /out/clk_tck 2>/dev/null || echo 100 > /out/clk_tck"
} > "$OUT/script.sh"
CACHE_ARG=""
[ -n "${HARNESS_VM_CACHE:-}" ] && CACHE_ARG="--cache $HARNESS_VM_CACHE"
case " $EXECUTORS " in
  *" harness "*)
    manifest=${HARNESS_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reclaim-harness}/image/manifest.json
    if [ -f "$manifest" ] && ! /usr/bin/python3 -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1])).get("with_cli", True) else 1)' "$manifest"; then
      echo "run_bench: EXECUTORS names harness, but the guest image ($manifest) has only the script that runs" \
        "harness-case in its place; build it with: $HARNESS vm $CACHE_ARG image --with-cli (or set EXECUTORS=harness-case)" >&2
      exit 2
    fi
    ;;
esac
"$HARNESS" vm $CACHE_ARG exec --script "$OUT/script.sh" --collect "$OUT/collect" \
  --timeout-s $(( $(echo $EXECUTORS | wc -w) * (WARMUP_S + PRESSURE_S + RECOVERY_S + 200) + 200)) > "$OUT/exec.log" 2>&1 || true
grep -m1 -i "accel" "$OUT/exec.log" || true
[ -f "$OUT/collect/clk_tck" ] || { echo "the guest script did not finish (last lines of $OUT/exec.log):" >&2
                                   tail -n 5 "$OUT/exec.log" >&2; exit 1; }
/usr/bin/python3 "$HERE/footprint.py" "$OUT/collect" bench-harness-self $EXECUTORS
