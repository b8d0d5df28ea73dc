#!/usr/bin/env bash
# Engine bench: the same one-triplet campaign (tests/vm/campaign/takeover.yaml: 3 cases of
# 3+15+3 s, a fresh guest per case) run on provider.kind local-qemu and on provider.kind
# libvirt (qemu:///system of a one-machine lab, tests/vm/pool_libvirt/libvirt_lab.sh), one
# after the other in one invocation, then side by side: `harness run` wall time, boot-to-ready
# per case and the per-case overhead (case wall minus its phases), each engine's own table from
# overhead_table.py above it. Boots qemu guests and starts libvirtd (root); not a ctest. On a
# shared machine run it alone (e.g. under the `flock` that guards your other guest runs).
# Usage: run_engine_bench.sh [BUILD_DIR] [OUT_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=${1:-$root/build}
out=${2:-$(mktemp -d /tmp/engine-bench-XXXXXX)}
harness=$build/harness/cli/harness
[[ -x $harness ]] || { echo "missing $harness (cmake --build $build --target harness)" >&2; exit 2; }
mkdir -p "$out/local" "$out/libvirt"
out=$(cd "$out" && pwd)

# The two campaigns differ only in name and provider block.
body=$(sed -n '/^phases_s:/,$p' "$root/tests/vm/campaign/takeover.yaml")
cat > "$out/local.yaml" <<EOF
name: engine-bench-local
kind: smoke
seed: 1
pinned_commit: any
vm: {vcpus: 1, memory_mib: 1024}
provider:
  kind: local-qemu
  count: 1
  fresh_guest_per_case: true
$body
EOF
cat > "$out/libvirt.yaml" <<EOF
name: engine-bench-libvirt
kind: smoke
seed: 1
pinned_commit: any
vm: {vcpus: 1, memory_mib: 1024}
provider:
  kind: libvirt
  hosts:
    - {uri: "qemu:///system", guests: 1}
  fresh_guest_per_case: true
  name_prefix: rhbench-
  storage_pool: reclaim-harness-bench
  storage_path: /var/lib/libvirt/reclaim-harness-bench
  boot_timeout_s: 300
$body
EOF

lab=$out/lab
cleanup() {
  "$harness" vm down --campaign "$out/libvirt.yaml" >> "$out/libvirt/run.log" 2>&1 || true
  [[ -f "$lab/lab.env" ]] && bash "$root/tests/vm/pool_libvirt/libvirt_lab.sh" stop "$lab" >> "$out/lab.log" 2>&1 || true
}
trap cleanup EXIT

echo "== local-qemu"
bash "$here/run_overhead_bench.sh" "$build" "$out/local.yaml" "$out/local" > "$out/local/table.md"
echo "== libvirt (lab: $lab)"
bash "$root/tests/vm/pool_libvirt/libvirt_lab.sh" start "$lab" > "$out/lab.log" 2>&1
bash "$here/run_overhead_bench.sh" "$build" "$out/libvirt.yaml" "$out/libvirt" > "$out/libvirt/table.md"

for e in local libvirt; do
  # shellcheck disable=SC2046
  /usr/bin/python3 "$here/overhead_table.py" "$out/$e/campaign.db" $(cat "$out/$e/run-times") \
    --json "$out/$e/summary.json" > /dev/null
  echo
  echo "### $e: per case"
  cat "$out/$e/overhead.md"
done
echo
/usr/bin/python3 - "$out/local/summary.json" "$out/libvirt/summary.json" <<'EOF'
import json, sys
rows = [("local-qemu", json.load(open(sys.argv[1]))), ("libvirt", json.load(open(sys.argv[2])))]
print("### Side by side (same campaign, same machine, one after the other)")
print()
print("| engine | accelerator | cases | `harness run` wall s | run start -> first case s | boot-to-ready per case s "
      "| mean phases s | mean case wall s | mean overhead per case s |")
print("|---|---|---:|---:|---:|---|---:|---:|---:|")
for name, s in rows:
    btr = ", ".join(f"{x:.1f}" for x in s["boot_to_ready_s"]) or "-"
    print(f"| {name} | {','.join(s['accelerators'])} | {s['cases']} | {s['run_wall_s']:.1f} | {s['to_first_case_s']:.1f} "
          f"| {btr} | {s['mean_s']['phases']:.1f} | {s['mean_s']['wall']:.1f} | {s['overhead_s']:.1f} |")
(la, a), (lb, b) = rows
print()
print(f"libvirt / local-qemu: run wall {b['run_wall_s'] / a['run_wall_s']:.2f}, "
      f"overhead per case {b['overhead_s'] / a['overhead_s']:.2f}")
EOF
echo "(DBs, logs and tables in $out)"
