#!/usr/bin/env bash
# README command 1: install what is missing, build, prepare the guest image, run
# campaigns/smoke.yaml on local qemu VMs, then analyse it and print Table 4 and the
# verdict. Outputs under ${OUT:-out/smoke}/ (campaign DB, report, figures).
# CAMPAIGN=campaigns/pilot.yaml OUT=out/pilot harness/scripts/main.sh runs another campaign.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
campaign=${CAMPAIGN:-$root/campaigns/smoke.yaml}
out=${OUT:-$root/out/smoke}
"$root/harness/scripts/install-deps.sh"
"$root/harness/scripts/build.sh"
harness=${BUILD_DIR:-$root/build}/harness/cli/harness
mkdir -p "$out"
start=$(date +%s)
echo "== guest image"
"$harness" vm image
echo "== campaign $(basename "$campaign") (database: $out/campaign.db)"
"$harness" plan "$campaign" --db "$out/campaign.db"
"$harness" run "$campaign" --db "$out/campaign.db"
if grep -Eq '^[[:space:]]*kind:[[:space:]]*pilot' "$campaign"; then
  # A pilot DB has no matched triplets: Table 3 and the dose chosen by the study's rule.
  echo "== pilot dose selection"
  "$harness" pilot-select "$out/campaign.db" | tee "$out/pilot-select.md"
  echo "== done in $(( $(date +%s) - start )) s; confirmatory campaigns take the dose with design.dose_mib: {from_pilot: $out/campaign.db}"
  exit 0
fi
echo "== analysis"
"$harness" analyze "$out/campaign.db" --format md --out "$out/report" > "$out/analyze.md"
# On the terminal: the warnings, the verdict and Table 4; the rest is in the report.
awk '/^## Table 1/ {skip=1} /^## Table 4/ {skip=0} /^## / && !/^## Table 4/ && !/^## Warnings/ {if (!/^## Table 1/) skip=1} !skip' "$out/analyze.md"
echo "== done in $(( $(date +%s) - start )) s; report: $out/report/report.md; figures: $out/report/*.png"
