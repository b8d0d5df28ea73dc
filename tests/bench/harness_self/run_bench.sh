#!/bin/sh
# Bench, not a timed test: the harness's own CPU time and RSS in a guest during a case, as
# a fraction of the vCPU (goal: <= 1% of the vCPU, <= 24 MiB; harness/case/SPEC.md v2
# `harness_self`). Boots a fresh local guest (`harness vm exec`, TCG without /dev/kvm),
# runs one static-zram case (the calibrated episode: 320 MiB at 16 MiB/s, 64 MiB active
# window sliding at the spec default, bg memory.max 300 MiB) and samples the executor from outside every second
# (/proc/<pid>/stat utime+stime, /proc/<pid>/status VmRSS/VmHWM), then prints those
# figures next to the executor's own outcome_json.harness_self.
#
# Usage: tests/bench/harness_self/run_bench.sh [BUILD_DIR=build] [OUT_DIR=/tmp/harness-self-bench]
#        PRESSURE_S=60 to change the pressure phase (warmup and recovery are 10 s);
#        HARNESS_VM_CACHE=DIR is passed as `harness vm --cache` (an image built there).
set -eu
BUILD=${1:-build}
OUT=${2:-/tmp/harness-self-bench}
PRESSURE_S=${PRESSURE_S:-60}
HARNESS=$BUILD/harness/cli/harness
[ -x "$HARNESS" ] || { echo "no $HARNESS: build first" >&2; exit 2; }
rm -rf "$OUT"; mkdir -p "$OUT/collect"
cat > "$OUT/script.sh" <<SCRIPT
mkdir -p /out/bundles
cat > /out/spec.json <<'JSON'
{"case_id": "bench-harness-self", "campaign": "bench", "vm": "vm0", "regime": "slow-structured",
 "repeat": 1, "configuration": "static-zram", "pinned_commit": "any",
 "vm_shape": {"vcpus": 1, "memory_mib": 1024},
 "phases_s": {"warmup": 10, "pressure": $PRESSURE_S, "recovery": 10},
 "cgroups": {"parent": "harness", "bg_memory_max_bytes": 314572800},
 "backend": {"zram_disksize_bytes": 536870912, "zram_algorithm": "lzo-rle", "zram_priority": 100,
             "swapfile_path": "/var/lib/harness/swapfile", "swapfile_priority": 10},
 "pressure": {"allocation_bytes": 335544320, "rate_mib_s": 16, "active_set_bytes": 67108864,
              "contents": "structured", "seed": 1},
 "canaries": {"period_ms": 100, "compute_hot_bytes": 16777216, "sqlite_db_path": "/var/lib/harness/canary.db",
              "sqlite_queries_per_request": 8, "seed": 1}}
JSON
harness case run --spec /out/spec.json --out /out/bundles --min-free-disk-mib 64 > /out/case.stdout 2> /out/case.stderr &
pid=\$!
: > /out/samples.txt
while kill -0 \$pid 2>/dev/null; do
  # uptime_s utime stime (ticks) VmRSS VmHWM (kB)
  if [ -r /proc/\$pid/stat ]; then
    set -- \$(cat /proc/\$pid/stat)
    rss=\$(grep VmRSS /proc/\$pid/status | tr -s ' \t' ' ' | cut -d' ' -f2)
    hwm=\$(grep VmHWM /proc/\$pid/status | tr -s ' \t' ' ' | cut -d' ' -f2)
    echo "\$(cut -d' ' -f1 /proc/uptime) \${14} \${15} \$rss \$hwm" >> /out/samples.txt
  fi
  sleep 1
done
wait \$pid; echo \$? > /out/case.rc
getconf CLK_TCK > /out/clk_tck 2>/dev/null || echo 100 > /out/clk_tck
SCRIPT
CACHE_ARG=""
[ -n "${HARNESS_VM_CACHE:-}" ] && CACHE_ARG="--cache $HARNESS_VM_CACHE"
"$HARNESS" vm $CACHE_ARG exec --script "$OUT/script.sh" --collect "$OUT/collect" --timeout-s $((PRESSURE_S + 400)) > "$OUT/exec.log" 2>&1 || true
python3 - "$OUT/collect" <<'PY'
import json, sqlite3, sys
d = sys.argv[1]
rows = [l.split() for l in open(d + "/samples.txt") if len(l.split()) == 5]
hz = int(open(d + "/clk_tck").read().strip() or 100)
if len(rows) >= 2:
    t0, u0, s0 = float(rows[0][0]), int(rows[0][1]), int(rows[0][2])
    t1, u1, s1 = float(rows[-1][0]), int(rows[-1][1]), int(rows[-1][2])
    cpu = ((u1 + s1) - (u0 + s0)) / hz
    print(f"sampled from outside: {len(rows)} samples over {t1 - t0:.0f} s; executor CPU {cpu:.2f} s "
          f"= {100 * cpu / (t1 - t0):.2f}% of the vCPU; RSS max {max(int(r[3]) for r in rows) / 1024:.1f} MiB, "
          f"VmHWM {int(rows[-1][4]) / 1024:.1f} MiB")
else:
    print("no samples (see exec.log / collect/case.stderr)")
db = sqlite3.connect(d + "/bundles/bench-harness-self.db")
status, out = db.execute("SELECT status, outcome_json FROM cases").fetchone()
hs = json.loads(out)["harness_self"]
print(f"case status {status}; outcome_json.harness_self: cpu {hs['cpu_ns'] / 1e9:.2f} s over "
      f"{hs['wall_ns'] / 1e9:.0f} s = {100 * hs['vcpu_fraction']:.2f}% of the vCPU; peak RSS "
      f"{hs['peak_rss_kib'] / 1024:.1f} MiB (executor {hs['executor']})")
sc = hs.get("schedule")
if sc:
    print(f"over the measured schedule: cpu {sc['cpu_ns'] / 1e9:.2f} s over {sc['wall_ns'] / 1e9:.0f} s = "
          f"{100 * sc['vcpu_fraction']:.2f}% of the vCPU, of which telemetry sampling {sc['telemetry_cpu_ns'] / 1e9:.2f} s")
PY
