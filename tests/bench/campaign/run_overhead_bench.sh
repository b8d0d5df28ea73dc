#!/usr/bin/env bash
# Campaign overhead bench: runs a short campaign (default campaigns/smoke.yaml: one local
# guest, 3 cases of 10+30+10 s) with a private guest cache, then prints per case the phase
# time against the wall time (boot, setup, transfer, import, restoration) and the overhead
# extrapolated to the study's 2+5+2 min phases (overhead_table.py). Boots qemu guests (TCG
# without /dev/kvm: minutes); not a ctest. The campaign DB and run log stay in OUT.
# Usage: run_overhead_bench.sh [BUILD_DIR] [CAMPAIGN_YAML] [OUT_DIR]
#   HARNESS=/path/to/harness runs that binary instead (e.g. a copy, with pressure-gen and the
#   canaries beside it, so that rebuilding BUILD_DIR meanwhile cannot replace it mid-run).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=${1:-$root/build}
campaign=${2:-$root/campaigns/smoke.yaml}
out=${3:-$(mktemp -d /tmp/campaign-overhead-XXXXXX)}
harness=${HARNESS:-$build/harness/cli/harness}
[[ -x $harness ]] || { echo "missing $harness (cmake --build $build --target harness)" >&2; exit 2; }
mkdir -p "$out"
# A private cache: an image built from this build's binaries and guests no other run sees.
export XDG_CACHE_HOME=$build/campaign-overhead-xdg
db=$out/campaign.db
rm -f "$db"
echo "== guest image (log: $out/run.log)"
"$harness" vm image > "$out/run.log" 2>&1
"$harness" plan "$campaign" --db "$db" >> "$out/run.log" 2>&1
echo "== harness run $(basename "$campaign")"
t0=$(date +%s%N)
"$harness" run "$campaign" --db "$db" --plain >> "$out/run.log" 2>&1 || { tail -20 "$out/run.log"; exit 1; }
t1=$(date +%s%N)
echo "--run-start-ns $t0 --run-end-ns $t1" > "$out/run-times"  # to re-render: overhead_table.py DB $(cat run-times)
/usr/bin/python3 "$here/overhead_table.py" "$db" --run-start-ns "$t0" --run-end-ns "$t1" | tee "$out/overhead.md"
echo "(DB and log in $out)"
