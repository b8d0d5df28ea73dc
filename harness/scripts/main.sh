#!/usr/bin/env bash
# README command 1: install what is missing, build, prepare the guest image, run
# campaigns/smoke.yaml on local qemu VMs, then analyse it and print Table 4 and the
# verdict. Outputs under ${OUT:-out/smoke}/ (campaign DB, report, figures).
# CAMPAIGN=campaigns/pilot.yaml OUT=out/pilot harness/scripts/main.sh runs another campaign;
# a pilot campaign (design pilot) ends with Table 3 and the chosen dose (harness pilot-select)
# instead of the analysis, and exits 1 when no dose is eligible.
# HOSTS=hosts.yaml runs the campaign on the agents listed there (real VMs, harness/vm/HOSTS.md)
# instead of the campaign's provider.
# SKIP_BUILD=1 skips install-deps and the build (uses ${BUILD_DIR:-build} as it is; tests).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
campaign=${CAMPAIGN:-$root/campaigns/smoke.yaml}
out=${OUT:-$root/out/smoke}
if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  "$root/harness/scripts/install-deps.sh"
  # Only what this job runs (target `product`: the CLI, agent, executor, workloads and the
  # figures module); harness/scripts/test.sh builds the tests.
  "$root/harness/scripts/build.sh" product
fi
harness=${BUILD_DIR:-$root/build}/harness/cli/harness
mkdir -p "$out"
start=$(date +%s)
echo "== guest image"
"$harness" vm image
echo "== campaign $(basename "$campaign") (database: $out/campaign.db)"
"$harness" plan "$campaign" "$out/campaign.db" | tee "$out/plan.txt"
hosts_args=()
if [[ -n "${HOSTS:-}" ]]; then hosts_args=(--hosts "$HOSTS"); fi
"$harness" run "$campaign" "$out/campaign.db" "${hosts_args[@]}"
if grep -Eq '^campaign .*, design pilot$' "$out/plan.txt"; then
  # A pilot DB has no matched triplets: Table 3 and the dose chosen by the study's rule.
  echo "== pilot dose selection"
  set +e
  "$harness" pilot-select "$out/campaign.db" --out "$out/pilot-select" | tee "$out/pilot-select.md"
  rc=${PIPESTATUS[0]}
  set -e
  db_abs=$(cd "$out" && pwd)/campaign.db
  echo "== done in $(( $(date +%s) - start )) s; Table 3: $out/pilot-select/report.md"
  if ((rc == 0)); then
    echo "A confirmatory campaign takes this dose from the pilot DB at plan time, never by hand:"
    echo "  design: {kind: matched-triplets, ..., dose_mib: {from_pilot: $db_abs}}"
  fi
  exit "$rc"
fi
echo "== analysis"
"$harness" analyze "$out/campaign.db" --format md --out "$out/report" > "$out/analyze.md"
# On the terminal: the warnings, the verdict and Table 4; the rest is in the report.
awk '/^## Table 1/ {skip=1} /^## Table 4/ {skip=0} /^## / && !/^## Table 4/ && !/^## Warnings/ {if (!/^## Table 1/) skip=1} !skip' "$out/analyze.md"
echo "== done in $(( $(date +%s) - start )) s; report: $out/report/report.md; figures: $out/report/*.png"
