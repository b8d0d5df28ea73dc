#!/bin/bash
# Workload benchmark: not a timed test, prints side-by-side tables.
#   tests/bench/workloads/run_bench.sh [BUILD_DIR] [WAKE_SECONDS]
# 1. wake delay p50/p99 of canary-compute (100 ms period, --hot-mib 16) vs cyclictest
#    (rt-tests) at the same interval, SCHED_OTHER like the canary and SCHED_FIFO 99 as
#    the RT reference, all three at the same time;
# 2. pressure-gen achieved allocation rate at 16, 64, 256 MiB/s (256 MiB, 32 MiB active set,
#    1 MiB chunks) for structured and random contents, against the target;
# 3. compression ratio of 64 MiB of structured and random pages with zstd (-3) and lz4 (-1),
#    whole file, plus zlib level 1 per 4 KiB page (zram's granularity).
# Numbers depend on the host: state its load when quoting them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../../build-workloads}
secs=${2:-60}
py=/usr/bin/python3
work=$(mktemp -d /tmp/hk-wl-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
cc=$build/canaries/canary-compute
pg=$build/pressure/pressure-gen
for b in "$cc" "$pg" cyclictest zstd lz4; do command -v "$b" >/dev/null || { echo "missing $b" >&2; exit 1; }; done

echo "# host: $(uname -r), $(nproc) CPUs, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "## 1. Wake delay at a 100 ms period, ${secs} s, run concurrently (us)"
loops=$((secs * 10))
"$cc" --period-ms 100 --duration-s "$secs" --hot-mib 16 --trace "$work/compute.trace" > "$work/compute.json" &
ccpid=$!
# cyclictest with the canary's policy (SCHED_OTHER: --policy=other and no -p; note that
# "-p 0" alone makes cyclictest default to SCHED_FIFO priority 2), and as the usual RT
# reference (SCHED_FIFO 99). cyclictest also writes 0 to /dev/cpu_dma_latency while it
# runs (all three share that machine state).
cyclictest -t1 -i 100000 -l "$loops" -q --policy=other -h 200000 --histfile="$work/cyclic-other.hist" \
  > "$work/cyclic-other.out" 2>&1 &
cyopid=$!
cyclictest -t1 -i 100000 -l "$loops" -q -p 99 -h 200000 --histfile="$work/cyclic-fifo.hist" > "$work/cyclic-fifo.out" 2>&1
wait $cyopid
wait $ccpid
read -r n50 c50 c99 cmax csched < <($py "$here/trace_quantiles.py" "$work/compute.trace")
read -r yn y50 y99 ymax yover < <($py "$here/cyclictest_quantiles.py" "$work/cyclic-other.hist")
read -r fn f50 f99 fmax fover < <($py "$here/cyclictest_quantiles.py" "$work/cyclic-fifo.hist")
printf "| %-44s | %7s | %9s | %9s | %9s |\n" tool samples "p50 (us)" "p99 (us)" "max (us)"
printf "| %-44s | %7s | %9s | %9s | %9s |\n" "canary-compute, SCHED_OTHER (type 7, trace)" "$n50" "$c50" "$c99" "$cmax"
printf "| %-44s | %7s | %9s | %9s | %9s |\n" "cyclictest --policy=other (1-us bins)" "$yn" "$y50" "$y99" "$ymax"
printf "| %-44s | %7s | %9s | %9s | %9s |\n" "cyclictest -p 99, SCHED_FIFO (1-us bins)" "$fn" "$f50" "$f99" "$fmax"
echo "canary summary: $(cat "$work/compute.json" | $py -c 'import json,sys; j=json.load(sys.stdin); print("wake p50", round(j["wake_delay_us"]["p50"],1), "p99", round(j["wake_delay_us"]["p99"],1), "service p50", round(j["service_time_us"]["p50"],1), "misses", j["deadline_misses"])'); trace check: $csched; cyclictest other $yover, fifo $fover"
echo
echo "## 2. pressure-gen achieved allocation rate (256 MiB, active set 32 MiB, chunk 1 MiB)"
printf "| %-10s | %-11s | %13s | %15s | %9s | %16s |\n" contents "target MiB/s" "achieved MiB/s" "achieved/target" "alloc s" "max chunk lag ms"
for contents in structured random; do
  for rate in 16 64 256; do
    dur=$($py -c "print(256/$rate + 5)")  # room to finish when the host is slow
    out=$("$pg" --allocation-mib 256 --rate-mib-s "$rate" --active-set-mib 32 --contents "$contents" --seed 1 \
            --duration-s "$dur")
    $py - "$out" "$contents" "$rate" <<'PY'
import json, sys
j = json.loads(sys.argv[1]); rate = float(sys.argv[3])
print(f"| {sys.argv[2]:<10} | {rate:<11g} | {j['achieved_rate_mib_s']:13.2f} | {j['achieved_rate_mib_s']/rate:15.3f} |"
      f" {j['allocation_elapsed_s']:9.3f} | {j['max_chunk_lag_ms']:16.2f} |"
      + ("" if j["allocation_complete"] else " INCOMPLETE"))
PY
  done
done
echo
echo "## 3. Compression ratio of generated pages (64 MiB sample, original / compressed)"
printf "| %-10s | %10s | %10s | %22s |\n" contents "zstd -3" "lz4 -1" "zlib-1 per 4 KiB page"
for contents in structured random; do
  "$pg" --dump-sample "$work/$contents.bin" --sample-mib 64 --contents "$contents" --seed 1 > /dev/null
  orig=$(stat -c %s "$work/$contents.bin")
  zs=$(zstd -3 -q -c "$work/$contents.bin" | wc -c)
  lz=$(lz4 -1 -q -c "$work/$contents.bin" | wc -c)
  pp=$($py -c "
import zlib,sys
b=open('$work/$contents.bin','rb').read(); c=sum(min(4096,len(zlib.compress(b[i:i+4096],1))) for i in range(0,len(b),4096))
print(f'{len(b)/c:.3f}')")
  printf "| %-10s | %10.3f | %10.3f | %22s |\n" "$contents" "$($py -c "print($orig/$zs)")" "$($py -c "print($orig/$lz)")" "$pp"
done
echo
echo "command: $0 $build $secs"
