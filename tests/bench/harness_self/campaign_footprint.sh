#!/bin/sh
# Bench, not a timed test: the harness's own CPU and peak RSS in the guest over one case run
# the way a campaign runs it (footprint goal: <= 0.25% of the vCPU over the measured
# phases, <= 16 MiB per process), agent included. run_bench.sh measures the executor alone
# (`harness vm exec`, no agent); here `harness run` drives one local guest through
# harness-agent, which starts harness-case, so outcome_json.harness_self carries both.
#
# The campaign is campaigns/smoke.yaml with the study's phase lengths (2 / 5 / 2 min by
# default), the calibrated pressure episode of campaigns/confirmatory.yaml (320 MiB allocated,
# a 64 MiB active set) and one configuration (static-zram: no treatment work in the executor).
# Prints, from outcome_json.harness_self: CPU of executor + agent over the measured phases (ms
# per s and % of the vCPU; the executor's, its telemetry samples' and the agent's parts),
# start-up and finish (the whole case minus the measured phases), the agent's CPU over the
# whole case, each process's peak RSS, and the accelerator. Exits non-zero when the case did
# not complete.
#
# Usage: tests/bench/harness_self/campaign_footprint.sh [BUILD_DIR=build] [OUT_DIR=/tmp/campaign-footprint]
#        WARMUP_S=120 PRESSURE_S=300 RECOVERY_S=120 CONFIGURATION=static-zram
#        POLICY=NAME (instead of CONFIGURATION): one arm of that registered policy with its
#        default parameters (`harness plan --list-policies`), e.g. POLICY=senpai, whose on_tick
#        hook runs every tick and writes memory.reclaim every interval: the footprint with
#        per-tick work in the executor.
# The guest image and the local fleet live in $XDG_CACHE_HOME/reclaim-harness (as for
# `harness run`); the image is built there from BUILD_DIR's binaries first.
set -eu
BUILD=${1:-build}
OUT=${2:-/tmp/campaign-footprint}
WARMUP_S=${WARMUP_S:-120}
PRESSURE_S=${PRESSURE_S:-300}
RECOVERY_S=${RECOVERY_S:-120}
CONFIGURATION=${CONFIGURATION:-static-zram}
POLICY=${POLICY:-}
arms_line="configurations: [$CONFIGURATION]"
[ -z "$POLICY" ] || arms_line="arms: [{name: $POLICY, policy: $POLICY}]"
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
HARNESS=$BUILD/harness/cli/harness
[ -x "$HARNESS" ] || { echo "no $HARNESS: build first" >&2; exit 2; }
rm -rf "$OUT"; mkdir -p "$OUT"

# Each substitution must have matched: a changed smoke.yaml fails here, not in a silent run.
sed -e "s/^name: smoke$/name: footprint/" \
    -e "s/^phases_s: .*/phases_s: {warmup: $WARMUP_S, pressure: $PRESSURE_S, recovery: $RECOVERY_S}/" \
    -e "s/^  allocation_mib: 600$/  allocation_mib: 320/" \
    -e "s/^  active_set_mib: 128$/  active_set_mib: 64/" \
    -e "s/^configurations: .*/$arms_line/" \
    "$ROOT/campaigns/smoke.yaml" > "$OUT/footprint.yaml"
for want in "name: footprint" "phases_s: {warmup: $WARMUP_S, pressure: $PRESSURE_S, recovery: $RECOVERY_S}" \
            "  allocation_mib: 320" "  active_set_mib: 64" "$arms_line"; do
  grep -qxF "$want" "$OUT/footprint.yaml" || { echo "campaigns/smoke.yaml changed: no line '$want' after the edit" >&2; exit 2; }
done

echo "host: nproc $(nproc), load before $(cut -d' ' -f1-3 /proc/loadavg)"
"$HARNESS" vm image > "$OUT/image.log" 2>&1 || { tail -n 5 "$OUT/image.log" >&2; exit 1; }
"$HARNESS" plan "$OUT/footprint.yaml" "$OUT/campaign.db" > "$OUT/plan.txt" 2>&1 || { cat "$OUT/plan.txt" >&2; exit 1; }
rc=0
"$HARNESS" run "$OUT/footprint.yaml" "$OUT/campaign.db" > "$OUT/run.log" 2>&1 || rc=$?
"$HARNESS" vm down >> "$OUT/run.log" 2>&1 || true
echo "host: load after $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$rc" = 0 ] || { echo "harness run exited $rc (last lines of $OUT/run.log):" >&2; tail -n 5 "$OUT/run.log" >&2; exit 1; }
/usr/bin/python3 - "$OUT/campaign.db" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
row = db.execute("SELECT case_id, status, accelerator, outcome_json, configuration FROM cases").fetchone()
if row is None or row[1] != "completed":
    sys.exit(f"the case did not complete: {row[:2] if row else 'no case row'}")
case_id, _, accel, out, arm = row
hs = json.loads(out).get("harness_self") or {}
sc, ag, ex = hs.get("schedule") or {}, hs.get("agent") or {}, hs.get("executor") or {}
if not sc or ag.get("cpu_ns") is None:
    sys.exit("outcome_json.harness_self has no schedule or no agent figures (was the executor started by harness-agent?)")
ms = lambda ns: ns / 1e6
wall_s = sc["wall_ns"] / 1e9
print(f"case {case_id} (arm {arm}), accelerator {accel}" + ("  (TCG: guest CPU times are inflated; not a KVM figure)" if accel == "tcg" else ""))
print("| figure | value |")
print("| --- | --- |")
print(f"| CPU over the measured phases (executor + agent) | {ms(sc['cpu_ns']):.0f} ms over {wall_s:.0f} s = "
      f"{ms(sc['cpu_ns']) / wall_s:.2f} ms/s = {100 * sc['vcpu_fraction']:.3f}% of the vCPU |")
sa = sc.get("agent_cpu_ns")  # absent in outcomes of executors before it was recorded
if sa is not None:
    print(f"| of which the executor | {ms(sc['cpu_ns'] - sa):.0f} ms = {ms(sc['cpu_ns'] - sa) / wall_s:.2f} ms/s |")
print(f"| of which the executor's telemetry samples (thread CPU) | {ms(sc['telemetry_cpu_ns']):.0f} ms = "
      f"{ms(sc['telemetry_cpu_ns']) / wall_s:.2f} ms/s |")
if sa is not None:
    print(f"| of which the agent | {ms(sa):.0f} ms = {ms(sa) / wall_s:.2f} ms/s |")
print(f"| start-up and finish (whole case minus measured phases) | {ms(hs['cpu_ns'] - sc['cpu_ns']):.0f} ms "
      f"(whole case {ms(hs['cpu_ns']):.0f} ms over {hs['wall_ns'] / 1e9:.0f} s) |")
print(f"| agent CPU over the whole case | {ms(ag['cpu_ns']):.0f} ms |")
print(f"| peak RSS (VmHWM): executor / agent | {ex.get('peak_rss_kib', 0) / 1024:.1f} / {ag.get('peak_rss_kib', 0) / 1024:.1f} MiB |")
goal = sc["vcpu_fraction"] <= 0.0025 and max(ex.get("peak_rss_kib", 0), ag.get("peak_rss_kib", 0)) <= 16 * 1024
print(f"goal (<= 0.25% of the vCPU over the measured phases, <= 16 MiB per process): {'met' if goal else 'not met'} in this case")
PY
