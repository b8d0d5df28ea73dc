#!/bin/bash
# Bench, not a timed test: the canary's wake delay against cyclictest's latency in the same
# guest at the same time (docs/DESIGN.md "Performance", "Canary against cyclictest in the
# guest"). Goal (ours): canary p99 within 20 us of cyclictest p99 in the same run. Prints;
# asserts nothing about the numbers.
#
# 1. Builds (or keeps, when its inputs are unchanged) an image with
#    `harness vm image --extra-binary /usr/bin/cyclictest` in its own cache (the kernel
#    package is shared with the guest tests: <build>/vm-downloads/kernels).
# 2. `harness vm exec`: a 1-vCPU / 1-GiB guest (KVM when the probe's trial boot works, else
#    TCG) with cgroup v2 siblings fg and bg, zram swap (512 MiB, lzo-rle) and bg memory.max
#    300 MiB. In fg, at the same time: canary-compute (period 100 ms, --hot-mib $HOT_MIB, default 16, --trace)
#    and cyclictest (SCHED_OTHER: --policy=other, one thread, interval 100,000 us, as many
#    loops as the canary has requests, 1-us histogram up to 500 ms; timer slack 1 ns like the
#    canary's; --default-system: it leaves /dev/cpu_dma_latency alone, as in a case).
#    The two wake grids are offset by OFFSET_US (default 50,000 = half a period): the canary's
#    requests start on whole seconds of CLOCK_MONOTONIC (--start-at-ns), cyclictest wakes at
#    whole seconds + OFFSET_US (--secaligned), so neither wakes while the other is handling its own
#    wake on the one vCPU (OFFSET_US=0: both at the same instant, for comparison).
#    Phase "idle": nothing else. Phase "pressure": pressure-gen in bg, started first; the
#    measurement starts once bg has begun to swap (memory.swap.current > 0), so the whole
#    phase is under reclaim. The bg numbers are the calibrated episode that
#    tests/bench/harness_self/run_bench.sh runs (its spec: pressure 320 MiB at 16 MiB/s,
#    64 MiB active set sliding at 0.34 MiB/s, structured, seed 1; bg memory.max 314572800 =
#    300 MiB; zram 512 MiB lzo-rle; canary hot region 16 MiB).
# 3. On the host: p50/p99/max of the canary's wake delay (trace_quantiles.py, type 7) and of
#    cyclictest's latency (cyclictest_quantiles.py, 1-us buckets) per phase, the difference of
#    the p99s, and bg pgsteal / system pswpout over each phase (that the phase was under pressure).
#
# Usage: tests/bench/workloads/guest_latency_reference.sh [BUILD_DIR=build] [OUT_DIR=/tmp/guest-latency-reference]
#   PHASE_S=60     seconds per phase (default 60; SHORT=1 makes it 8, for the ctest smoke run)
#   OFFSET_US=50000  cyclictest's wakes after the canary's, us, in [0, 100000)
#   HOT_MIB=16     the canary's hot region, MiB (a smaller one separates the canary's own CPU use)
#   HARNESS_VM_CACHE=DIR   cache passed as `harness vm --cache` (default BUILD_DIR/guest-latency-cache)
#   HARNESS_ACCEL=tcg|kvm|auto  as for every `harness vm` command
#   CYCLICTEST=/usr/bin/cyclictest (package rt-tests)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "${1:-build}" && pwd)
OUT=${2:-/tmp/guest-latency-reference}
if [[ -n "${SHORT:-}" ]]; then PHASE_S=${PHASE_S:-8}; else PHASE_S=${PHASE_S:-60}; fi
OFFSET_US=${OFFSET_US:-50000}
HOT_MIB=${HOT_MIB:-16}
[[ "$HOT_MIB" =~ ^[1-9][0-9]*$ ]] || { echo "guest_latency_reference: HOT_MIB=$HOT_MIB is not a whole number of MiB > 0" >&2; exit 2; }
CYCLICTEST=${CYCLICTEST:-/usr/bin/cyclictest}
CACHE=${HARNESS_VM_CACHE:-$BUILD/guest-latency-cache}
HARNESS=$BUILD/harness/cli/harness
PY=/usr/bin/python3
[[ -x "$HARNESS" ]] || { echo "guest_latency_reference: no $HARNESS: build harness, canary-compute, pressure-gen first" >&2; exit 2; }
[[ -x "$CYCLICTEST" ]] || { echo "guest_latency_reference: no $CYCLICTEST (install rt-tests: harness/scripts/install-deps.sh)" >&2; exit 2; }
[[ "$PHASE_S" =~ ^[1-9][0-9]*$ ]] || { echo "guest_latency_reference: PHASE_S=$PHASE_S is not a whole number of seconds > 0" >&2; exit 2; }
[[ "$OFFSET_US" =~ ^[0-9]+$ ]] && ((OFFSET_US < 100000)) ||
  { echo "guest_latency_reference: OFFSET_US=$OFFSET_US is not a whole number of us in [0, 100000)" >&2; exit 2; }
rm -rf "$OUT"
mkdir -p "$OUT/collect" "$CACHE"
# The kernel package is the guest tests' (tests/common/vm_downloads.hpp); the image is our own.
mkdir -p "$BUILD/vm-downloads/kernels"
[[ -e "$CACHE/kernels" ]] || ln -s "$BUILD/vm-downloads/kernels" "$CACHE/kernels"

echo "# guest latency reference: $(date -u +%Y-%m-%dT%H:%M:%SZ), host $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), phases ${PHASE_S} s"
t0=$SECONDS
if ! "$HARNESS" vm --cache "$CACHE" image --extra-binary "$CYCLICTEST" --no-canary-db --disk-mib 1024 \
    > "$OUT/image.stdout" 2> "$OUT/image.stderr"; then
  echo "guest_latency_reference: harness vm image failed:" >&2
  tail -20 "$OUT/image.stderr" >&2
  exit 1
fi
echo "# image: $(grep -E '^(build time|kept)' "$OUT/image.stdout" || true) ($((SECONDS - t0)) s with the accelerator probe); $(grep '^extra binaries' "$OUT/image.stdout")"

{
  echo "PHASE_S=$PHASE_S OFFSET_US=$OFFSET_US HOT_MIB=$HOT_MIB"
  cat <<'SCRIPT'
set -eu
LOOPS=$((PHASE_S * 10))
CG=/sys/fs/cgroup
# zram swap as the calibrated case's backend (512 MiB, lzo-rle); the swapfile stays off
echo lzo-rle > /sys/block/zram0/comp_algorithm
echo 512M > /sys/block/zram0/disksize
mkswap /dev/zram0 > /dev/null
swapon /dev/zram0
mkdir $CG/fg $CG/bg
echo 314572800 > $CG/bg/memory.max
# in_cg CGROUP SLACK CMD...: with `&`, the background subshell becomes CMD (so $! is its pid),
# in CGROUP, with timer slack SLACK ns ("-" = leave it: the canary sets 1 ns itself, cyclictest
# keeps the slack of the shell that execs it).
in_cg() {
  cg=$1 slack=$2
  shift 2
  exec sh -c 'echo $$ > "$0/cgroup.procs"; [ "$1" = - ] || echo "$1" > /proc/self/timerslack_ns; shift; exec "$@"' \
    "$CG/$cg" "$slack" "$@"
}
stat_line() {  # PHASE WHEN: bg pgsteal, system pswpout (pages), bg memory.swap.current (bytes)
  echo "$1 $2 $(awk '$1 == "pgsteal" {print $2}' $CG/bg/memory.stat) $(awk '$1 == "pswpout" {print $2}' /proc/vmstat) $(cat $CG/bg/memory.swap.current)" >> /out/counters.txt
}
measure() {  # PHASE
  stat_line $1 before
  # The canary's first request on the second whole second from now. /proc/uptime is
  # CLOCK_BOOTTIME, which is CLOCK_MONOTONIC in a guest that never suspends; cyclictest
  # --secaligned starts on the next whole second of CLOCK_MONOTONIC (+ the offset) itself.
  start_ns=$(( ($(cut -d. -f1 /proc/uptime) + 2) * 1000000000 ))
  in_cg fg - canary-compute --period-ms 100 --duration-s $PHASE_S --hot-mib $HOT_MIB --seed 1 --start-at-ns $start_ns \
    --trace /out/$1.canary.trace > /out/$1.canary.json 2> /out/$1.canary.stderr &
  cpid=$!
  in_cg fg 1 cyclictest -t1 -i 100000 -l $LOOPS -q --policy=other --default-system -h 500000 \
    --secaligned=$OFFSET_US --histfile=/out/$1.cyclictest.hist > /out/$1.cyclictest.out 2>&1 &
  ypid=$!
  # its timer slack once it is cyclictest (at most 50 looks, 0.1 s apart)
  for i in $(seq 50); do
    case "$(readlink /proc/$ypid/exe 2>/dev/null)" in */cyclictest) break ;; esac
    sleep 0.1
  done
  echo "$1 $(cat /proc/$ypid/timerslack_ns 2>/dev/null || echo unknown)" >> /out/cyclictest_slack.txt
  rc=0
  wait $cpid || rc=$?
  wait $ypid || rc=$?
  stat_line $1 after
  return $rc
}
echo "=== phase idle ($PHASE_S s)"
measure idle
echo "=== phase pressure: pressure-gen in bg, measurement from the first swap-out"
in_cg bg - pressure-gen --allocation-mib 320 --rate-mib-s 16 --active-set-mib 64 --active-set-slide-mib-s 0.34 \
  --contents structured --seed 1 > /out/pressure-gen.json 2> /out/pressure-gen.stderr &
ppid=$!
t0=$(cut -d' ' -f1 /proc/uptime)
n=0
while [ "$(cat $CG/bg/memory.swap.current)" = 0 ]; do
  n=$((n + 1))
  [ $n -le 1200 ] || { echo "bg did not swap within 120 s"; kill $ppid; exit 3; }
  kill -0 $ppid 2>/dev/null || { echo "pressure-gen exited before bg swapped"; cat /out/pressure-gen.stderr; exit 3; }
  sleep 0.1
done
echo "ramp $t0 $(cut -d' ' -f1 /proc/uptime)" > /out/ramp.txt
measure pressure
kill -TERM $ppid
wait $ppid || true
echo "=== done"
SCRIPT
} > "$OUT/script.sh"

t1=$SECONDS
rc=0
"$HARNESS" vm --cache "$CACHE" exec --script "$OUT/script.sh" --collect "$OUT/collect" --swapfile-mib 16 \
  --timeout-s $((2 * PHASE_S + 600)) > "$OUT/exec.stdout" 2> "$OUT/exec.stderr" || rc=$?
accel=$(sed -n 's/^accelerator: //p' "$OUT/exec.stdout")
echo "# guest: $((SECONDS - t1)) s wall (boot, both phases, power-off); $(grep -m1 '^accelerator: ' "$OUT/exec.stderr" || echo "accelerator ${accel:-unknown}")"
if ((rc != 0)); then
  echo "guest_latency_reference: harness vm exec exit $rc; console tail:" >&2
  tail -30 "$OUT/collect/console.log" >&2 || cat "$OUT/exec.stderr" >&2
  exit 1
fi

c=$OUT/collect
rows=()
echo
if [[ "$accel" == tcg ]]; then
  echo "Under TCG (no KVM): every figure below is a TCG figure (emulated CPU, inflated times), not a KVM or bare-metal one."
fi
printf "| %-8s | %-44s | %5s | %9s | %9s | %9s |\n" phase tool n "p50 (us)" "p99 (us)" "max (us)"
printf "| %-8s | %-44s | %5s | %9s | %9s | %9s |\n" --- --- ---: ---: ---: ---:
for phase in idle pressure; do
  cq=$($PY "$here/trace_quantiles.py" "$c/$phase.canary.trace")
  yq=$($PY "$here/cyclictest_quantiles.py" "$c/$phase.cyclictest.hist")
  read -r cn c50 c99 cmax csched <<< "$cq"
  read -r yn y50 y99 ymax yover <<< "$yq"
  printf "| %-8s | %-44s | %5s | %9s | %9s | %9s |\n" "$phase" "canary-compute wake delay (type 7)" "$cn" "$c50" "$c99" "$cmax"
  printf "| %-8s | %-44s | %5s | %9s | %9s | %9s |\n" "$phase" "cyclictest --policy=other (1-us buckets)" "$yn" "$y50" "$y99" "$ymax"
  rows+=("$phase: canary p99 - cyclictest p99 = $($PY -c "import sys; print(f'{float(sys.argv[1]) - float(sys.argv[2]):+.1f}')" "$c99" "$y99") us (goal: within 20 us); canary trace $csched, cyclictest $yover")
done
echo
printf "%s\n" "${rows[@]}"
for phase in idle pressure; do
  $PY - "$here" "$c/$phase.canary.trace" "$phase" "$OFFSET_US" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from trace_quantiles import read_trace
name, period, origin, recs = read_trace(sys.argv[2])
print(f"{sys.argv[3]}: canary origin {origin / 1e9:.3f} s CLOCK_MONOTONIC (whole second + {origin % 10**9 / 1e6:.1f} ms), "
      f"cyclictest grid whole second + {int(sys.argv[4]) / 1e3:.1f} ms (--secaligned)")
PY
done
slack_c=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["timer_slack_ns"])' "$c/idle.canary.json")
echo "timer slack: canary ${slack_c} ns; cyclictest $(tr '\n' ' ' < "$c/cyclictest_slack.txt")(ns, per phase)"
$PY - "$c" <<'PY'
import sys
d = sys.argv[1]
rows = {}
for line in open(d + "/counters.txt"):
    phase, when, pgsteal, pswpout, swap = line.split()
    rows[(phase, when)] = (int(pgsteal), int(pswpout), int(swap))
ramp = open(d + "/ramp.txt").read().split()
print(f"pressure-gen ran {float(ramp[2]) - float(ramp[1]):.1f} s before bg first swapped; the pressure phase starts there")
for phase in ("idle", "pressure"):
    b, a = rows[(phase, "before")], rows[(phase, "after")]
    print(f"{phase}: bg pgsteal +{a[0] - b[0]} pages ({(a[0] - b[0]) * 4 / 1024:.1f} MiB), pswpout +{a[1] - b[1]} pages "
          f"({(a[1] - b[1]) * 4 / 1024:.1f} MiB), bg memory.swap.current {a[2] / 2**20:.1f} MiB at the end "
          f"(memory.stat is flushed about every 2 s)")
PY
echo "command: $0 $BUILD $OUT (PHASE_S=$PHASE_S OFFSET_US=$OFFSET_US${HARNESS_ACCEL:+ HARNESS_ACCEL=$HARNESS_ACCEL}); accelerator $accel"
