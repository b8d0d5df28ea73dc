#!/usr/bin/env bash
# README command 2: install what is missing, build, run every test (unit,
# statistics and the vm-labelled tests that boot a qemu guest).
# Fast tests only: LABELS=unit harness/scripts/test.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
"$root/harness/scripts/install-deps.sh"
"$root/harness/scripts/build.sh"
build=${BUILD_DIR:-$root/build}
args=(--test-dir "$build" --output-on-failure)
if [[ -n "${LABELS:-}" ]]; then args+=(-L "$LABELS"); fi
ctest "${args[@]}"
