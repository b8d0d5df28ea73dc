#!/usr/bin/env bash
# README command 2: install what is missing, build, run every test (unit,
# statistics and the vm-labelled tests that boot a qemu guest).
# Fast tests only: LABELS=unit harness/scripts/test.sh
# CTEST_JUNIT_DIR=DIR writes ctest's JUnit reports there: DIR/guest.xml and DIR/guest2.xml for
# the vm-labelled tests (the two lanes below), DIR/fast.xml for all the others (with LABELS set:
# DIR/labels.xml), and beside each, DIR/NAME.registered.json, the tests that run was to run
# (`ctest --show-only=json-v1` with the same label filters). .ci/run judges them
# (.ci/ctest_verdict.py: every registered test in one lane, in its report, passed).
#
# Order of a whole run on 2 or more cores: the guest tests and everything they run are built
# first (target guest_tests, every core); then the first lane of guest tests starts, one at a
# time (RUN_SERIAL: a 1-vCPU TCG guest takes one core), while the rest of the tree is built and
# the fast tests run on the other cores at nice 19, so that the guests' host side (runner, agent
# client, qemu) keeps the CPU it needs. Once the build and the fast tests are done, the second
# lane (the tests labelled vm-lane2, each with its own cache and fleet, no timing claim) runs on
# the core they leave, at nice 10, so that at most two guests run at once and never beside the
# build; tests/README.md "CI wall time" says how the lanes were balanced. The script waits for
# everything and fails when anything failed. On one core everything runs one after the other.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# Stage times: each stage appends "NAME SECONDS" to $stages; the summary is printed at the end
# (also when a stage fails), so CI's log says where its minutes went.
stages=$(mktemp)
guest_times=$(mktemp)
summary() {
  echo "test: stage times (s; guest lane 1 runs beside the rest of the build and the fast tests, lane 2 after them):"
  cat "$stages" "$guest_times" | awk '{ printf "test:   %-28s %6d\n", $1, $2 }'
  rm -f "$stages" "$guest_times"
}
trap summary EXIT
stage_start=$SECONDS
# stage NAME: records the seconds since the previous call (or the start) under NAME.
stage() { echo "$1 $((SECONDS - stage_start))" >>"$stages"; stage_start=$SECONDS; }
"$root/harness/scripts/install-deps.sh"
stage install
build=${BUILD_DIR:-$root/build}
cores=$(nproc)
# ctest_run NAME ARGS...: one ctest invocation, its JUnit report in $CTEST_JUNIT_DIR/NAME.xml and
# the tests it is to run, listed by ctest with the same ARGS before it starts, in
# $CTEST_JUNIT_DIR/NAME.registered.json (a listing that fails leaves no file: the verdict then
# names those tests as run in no lane); NICE="nice -n 19" lowers its priority.
ctest_run() {
  local name=$1 junit=()
  shift
  if [[ -n "${CTEST_JUNIT_DIR:-}" ]]; then
    junit=(--output-junit "$CTEST_JUNIT_DIR/$name.xml")
    ctest --test-dir "$build" --show-only=json-v1 "$@" >"$CTEST_JUNIT_DIR/$name.registered.json.part" &&
      mv "$CTEST_JUNIT_DIR/$name.registered.json.part" "$CTEST_JUNIT_DIR/$name.registered.json" ||
      echo "test: ctest could not list the tests of $name" >&2
  fi
  ${NICE:-} ctest --test-dir "$build" --output-on-failure "${junit[@]}" "$@"
}

if [[ -n "${LABELS:-}" ]]; then
  "$root/harness/scripts/build.sh"
  stage build
  rc=0
  ctest_run labels -j"$cores" -L "$LABELS" || rc=$?
  stage "tests($LABELS)"
  exit "$rc"
fi
if ((cores < 2)); then
  "$root/harness/scripts/build.sh"
  stage build
  rc=0
  ctest_run fast -LE '^vm$' || rc=1
  stage fast-tests
  ctest_run guest -L '^vm$' -LE '^vm-lane2$' || rc=1
  ctest_run guest2 -L '^vm-lane2$' || rc=1
  stage guest-tests
  exit "$rc"
fi

start=$SECONDS
"$root/harness/scripts/build.sh" guest_tests
stage build-guest-tests
guest_rc_file=$(mktemp)
lane2_rc_file=$(mktemp)
trap 'rm -f "$guest_rc_file" "$lane2_rc_file"; summary' EXIT
echo "test: $(date +%T) guest tests built in $((SECONDS - start)) s; they start now, the rest of the build and the fast" \
  "tests run beside them (lines marked [guest] are the guest tests')"
{
  rc=0 t0=$SECONDS
  ctest_run guest -L '^vm$' -LE '^vm-lane2$' || rc=$?
  echo "$rc" >"$guest_rc_file"
  echo "guest-tests(lane1) $((SECONDS - t0))" >>"$guest_times"
} 2>&1 | sed -u 's/^/[guest] /' &
guest_pipe=$!
others=$((cores - 1))
rest_rc=0
BUILD_JOBS=$others nice -n 19 "$root/harness/scripts/build.sh" || rest_rc=$?
stage build-rest
if ((rest_rc == 0)); then
  echo "test: $(date +%T) the rest built ($((SECONDS - start)) s since the start); fast tests start"
  NICE="nice -n 19" ctest_run fast -j"$others" -LE '^vm$' || rest_rc=$?
  stage fast-tests
else
  echo "test: the build of the rest failed (exit $rest_rc); the fast tests were not run" >&2
fi
echo "test: $(date +%T) fast tests done ($((SECONDS - start)) s); guest lane 2 starts (lines marked [guest2])"
{
  rc=0
  NICE="nice -n 10" ctest_run guest2 -L '^vm-lane2$' || rc=$?
  echo "$rc" >"$lane2_rc_file"
} 2>&1 | sed -u 's/^/[guest2] /'
lane2_rc=$(cat "$lane2_rc_file")
stage guest-tests-lane2
echo "test: $(date +%T) guest lane 2 exit $lane2_rc; waiting for lane 1"
wait "$guest_pipe" || true
stage waiting-for-guest-lane1
guest_rc=$(cat "$guest_rc_file")
echo "test: $(date +%T) guest lane 1 exit ${guest_rc:-unknown}, lane 2 exit $lane2_rc; build and fast tests exit $rest_rc" \
  "($((SECONDS - start)) s in all)"
[[ "$guest_rc" == 0 && "$lane2_rc" == 0 && $rest_rc == 0 ]]
