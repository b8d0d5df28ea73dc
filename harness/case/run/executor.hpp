#pragma once
// `harness case run`: one case end to end (docs/DESIGN.md "The case").
//
//   leftover cleanup -> qualification -> setup (cgroups, backend) -> canaries start
//   -> warmup -> pressure (pressure-gen in bg; controller armed) -> recovery
//   -> restoration (stop, swapoff, zram reset + hot_remove, rmdir, settle, verify) -> bundle
// A leftover the cleanup cannot release stops the case before qualification (SPEC.md).
// executor.cpp is that sequence; each step lives in its own file (harness/case/README.md):
// preconditions.hpp, tick_loop.hpp + measured_schedule.hpp, policies/ (what each
// arm's policy does), restoration.hpp, trace_import.hpp, case_outcome.hpp.
//
// Clock: CLOCK_MONOTONIC. The schedule origin T0 = now + start lead; phase boundaries are
// the scheduled times T0, T0+W, T0+W+P, T0+W+P+R (the canaries' shared --start-at-ns is
// T0, so "requests whose scheduled start lies in the pressure phase" is exact). Telemetry
// and the controller tick at T0 + k * telemetry_period on absolute sleeps
// (clock_nanosleep TIMER_ABSTIME); a tick that is already past is skipped, not
// caught up (counted in telemetry extra_json.missed_ticks; tick_loop.hpp).
//
// Status: completed (whatever latency, OOM kills, reclaim errors, partial reclaim,
// unclean restoration); otherwise a failure the executor detects itself (qualification
// failed, setup failed, a workload could not start, a canary left no trace without having
// been OOM-killed, cancelled by SIGTERM/SIGINT, an executor error, the bundle write) is
// classified by the phase the agent may have shown the runner, exactly as the runner
// decides a vanished case (docs/PROTOCOL.md): infra_failed (rerun) before the pressure
// phase was reported, lost (an outcome, never rerun; study: reruns only after an
// infrastructure failure) once it was. Exit codes: 0 completed, 3 infra_failed, 4 lost (a
// bundle is written in every case when the out dir is writable).
#include <cstdint>
#include <optional>
#include <string>

#include "harness/case/run/executor_options.hpp"
#include "harness/case/spec/spec.hpp"

namespace harness::case_ {

struct ExecutorResult {
  int exit_code = 3;        ///< 0 completed, 3 infra_failed, 4 lost
  std::string status;       ///< completed | infra_failed | lost
  std::string bundle_path;  ///< "" when no bundle could be written
  std::string error;        ///< the failure (infra_failed or lost)
};

/// The status of a case that ended with `failure` (none = completed): lost once the phase
/// file reported pressure (`pressure_reported`), infra_failed before (docs/PROTOCOL.md).
ExecutorResult classify(const std::optional<std::string>& failure, bool pressure_reported);

/// Runs one already-validated case. Never throws: failures become infra_failed or lost
/// by the phase reached (classify).
ExecutorResult run_case(const CaseSpec& spec, const ExecutorOptions& opt);

}  // namespace harness::case_
