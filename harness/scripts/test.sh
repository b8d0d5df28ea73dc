#!/usr/bin/env bash
# README command 2: install what is missing, build, run every test (unit,
# statistics and the vm-labelled tests that boot a qemu guest).
# Fast tests only: LABELS=unit harness/scripts/test.sh
# CTEST_JUNIT=FILE also writes ctest's JUnit report there (.ci/run judges it).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
"$root/harness/scripts/install-deps.sh"
"$root/harness/scripts/build.sh"
build=${BUILD_DIR:-$root/build}
# The fast tests run in parallel, one per core; each vm-labelled test runs alone (RUN_SERIAL).
args=(--test-dir "$build" --output-on-failure -j"$(nproc)")
if [[ -n "${LABELS:-}" ]]; then args+=(-L "$LABELS"); fi
if [[ -n "${CTEST_JUNIT:-}" ]]; then args+=(--output-junit "$CTEST_JUNIT"); fi
ctest "${args[@]}"
