#!/usr/bin/env bash
# README command 2: install what is missing, build, run every test (unit,
# statistics and the vm-labelled tests that boot a qemu guest).
# Fast tests only: LABELS=unit harness/scripts/test.sh
# CTEST_JUNIT_DIR=DIR writes ctest's JUnit reports there: DIR/guest.xml for the vm-labelled
# tests, DIR/fast.xml for all the others (with LABELS set: DIR/labels.xml). .ci/run judges them.
#
# Order of a whole run on 2 or more cores: the guest tests and everything they run are built
# first (target guest_tests, every core); then the guest tests start, one at a time (RUN_SERIAL:
# a 1-vCPU TCG guest takes one core, the capacity rule leaves the others to the host), while the
# rest of the tree is built and the fast tests run on the other cores at nice 19, so that the
# guests' host side (runner, agent client, qemu) keeps the CPU it needs. The script waits for
# both and fails when either failed. On one core everything runs one after the other.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
"$root/harness/scripts/install-deps.sh"
build=${BUILD_DIR:-$root/build}
cores=$(nproc)
# ctest_run NAME ARGS...: one ctest invocation, its JUnit report in $CTEST_JUNIT_DIR/NAME.xml;
# NICE="nice -n 19" lowers its priority.
ctest_run() {
  local name=$1 junit=()
  shift
  if [[ -n "${CTEST_JUNIT_DIR:-}" ]]; then junit=(--output-junit "$CTEST_JUNIT_DIR/$name.xml"); fi
  ${NICE:-} ctest --test-dir "$build" --output-on-failure "${junit[@]}" "$@"
}

if [[ -n "${LABELS:-}" ]]; then
  "$root/harness/scripts/build.sh"
  ctest_run labels -j"$cores" -L "$LABELS"
  exit
fi
if ((cores < 2)); then
  "$root/harness/scripts/build.sh"
  rc=0
  ctest_run fast -LE '^vm$' || rc=1
  ctest_run guest -L '^vm$' || rc=1
  exit "$rc"
fi

start=$SECONDS
"$root/harness/scripts/build.sh" guest_tests
guest_rc_file=$(mktemp)
trap 'rm -f "$guest_rc_file"' EXIT
echo "test: $(date +%T) guest tests built in $((SECONDS - start)) s; they start now, the rest of the build and the fast" \
  "tests run beside them (lines marked [guest] are the guest tests')"
{ rc=0; ctest_run guest -L '^vm$' || rc=$?; echo "$rc" >"$guest_rc_file"; } 2>&1 | sed -u 's/^/[guest] /' &
guest_pipe=$!
others=$((cores - 1))
rest_rc=0
BUILD_JOBS=$others nice -n 19 "$root/harness/scripts/build.sh" || rest_rc=$?
if ((rest_rc == 0)); then
  echo "test: $(date +%T) the rest built ($((SECONDS - start)) s since the start); fast tests start"
  NICE="nice -n 19" ctest_run fast -j"$others" -LE '^vm$' || rest_rc=$?
else
  echo "test: the build of the rest failed (exit $rest_rc); the fast tests were not run" >&2
fi
echo "test: $(date +%T) fast tests done ($((SECONDS - start)) s); waiting for the guest tests"
wait "$guest_pipe" || true
guest_rc=$(cat "$guest_rc_file")
echo "test: $(date +%T) guest tests exit ${guest_rc:-unknown}; build and fast tests exit $rest_rc ($((SECONDS - start)) s in all)"
[[ "$guest_rc" == 0 && $rest_rc == 0 ]]
