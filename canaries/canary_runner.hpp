#pragma once
// What both canary executables share: the run flags, the schedule they define, and the
// run itself (stop handlers, preallocated trace, periodic loop, trace written once at
// exit, JSON summary on stdout). Contract with the case executor (harness/case):
//   --period-ms P (default 100)  --duration-s S (required)  --trace FILE (required)
//   [--start-at-ns T] (absolute CLOCK_MONOTONIC ns of request 0; default now + one period,
//   so that canaries started together can share a schedule origin)  [--seed N] (default 1).
// Requests are scheduled at T + k*P for k in [0, ceil(S/P)), i.e. the run covers
// [T, T + S). SIGTERM/SIGINT end the run early; the trace is still written and the
// exit code is 0.
#include "canaries/periodic_loop.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace canaries {

/// Flags of `run` (see file comment). Units in the names.
struct CanaryOptions {
  std::int64_t period_ms = 100;
  double duration_s = 0;
  std::string trace_path;
  std::optional<std::int64_t> start_at_ns;
  std::uint64_t seed = 1;
};

/// Registers --period-ms, --duration-s, --trace, --start-at-ns, --seed on `app`.
void add_run_options(CLI::App& app, CanaryOptions& o);

/// Checks the flags and returns the schedule. `now_ns` = current CLOCK_MONOTONIC time.
/// Throws std::invalid_argument naming the flag: --period-ms outside [1, 60000],
/// --duration-s not in (0, 30 days] or shorter than one period, --start-at-ns more
/// than 10 s in the past, empty --trace.
Schedule make_schedule(const CanaryOptions& o, std::int64_t now_ns);

/// Runs a canary named `canary` ("compute" | "sqlite"): checks that --trace is writable
/// (before the run, so a bad path fails at once), installs SIGTERM/SIGINT handlers, sets
/// the thread's timer slack to 1 ns (PR_SET_TIMERSLACK; default 50 us would defer wakes),
/// preallocates the trace for the whole schedule, runs `request` on the schedule,
/// writes the trace, and prints summarize(...) plus "requests_planned", "stopped_by"
/// ("schedule_end" | "SIGTERM" | "SIGINT" | "error"), "timer_slack_ns", "trace", "error" and the fields
/// that `extra` adds, as one JSON line on stdout.
/// Returns the exit code: 0 on a normal end or a stop signal; 1 when a request threw
/// (trace of completed requests still written) or the trace could not be written.
int run_canary(const std::string& canary, const CanaryOptions& o, const RequestFn& request,
               const std::function<void(nlohmann::json&)>& extra);

}  // namespace canaries
