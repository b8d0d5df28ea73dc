#include "canaries/canary_runner.hpp"

#include "canaries/clock.hpp"
#include "canaries/stop_signal.hpp"
#include "canaries/summary.hpp"
#include "canaries/trace_file.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstring>
#include <iostream>
#include <stdexcept>

namespace canaries {

void add_run_options(CLI::App& app, CanaryOptions& o) {
  app.add_option("--period-ms", o.period_ms, "request period, ms (study: 100)")->capture_default_str();
  app.add_option("--duration-s", o.duration_s, "run length, s: requests scheduled in [start, start + S)")
      ->required();
  app.add_option("--trace", o.trace_path, "trace file written at exit (canaries/TRACE.md)")->required();
  app.add_option("--start-at-ns", o.start_at_ns,
                 "absolute CLOCK_MONOTONIC ns of the first scheduled start (default: now + one period)");
  app.add_option("--seed", o.seed, "seed of the workload's deterministic choices")->capture_default_str();
}

Schedule make_schedule(const CanaryOptions& o, std::int64_t now_ns) {
  if (o.period_ms < 1 || o.period_ms > 60'000) {
    throw std::invalid_argument("--period-ms " + std::to_string(o.period_ms) + " must be in [1, 60000]");
  }
  if (!(o.duration_s > 0) || o.duration_s > 30.0 * 86400) {
    throw std::invalid_argument("--duration-s " + std::to_string(o.duration_s) + " must be in (0, 2592000]");
  }
  if (o.trace_path.empty()) throw std::invalid_argument("--trace must name a file");
  Schedule s;
  s.period_ns = o.period_ms * 1'000'000;
  const auto duration_ns = static_cast<std::int64_t>(std::llround(o.duration_s * 1e9));
  if (duration_ns < s.period_ns) {
    throw std::invalid_argument("--duration-s " + std::to_string(o.duration_s) + " is shorter than one period (" +
                                std::to_string(o.period_ms) + " ms)");
  }
  s.requests = static_cast<std::uint64_t>((duration_ns + s.period_ns - 1) / s.period_ns);
  if (o.start_at_ns) {
    if (*o.start_at_ns < now_ns - 10'000'000'000LL) {
      throw std::invalid_argument("--start-at-ns " + std::to_string(*o.start_at_ns) + " is " +
                                  std::to_string((now_ns - *o.start_at_ns) / 1'000'000) +
                                  " ms in the past (CLOCK_MONOTONIC now = " + std::to_string(now_ns) + ")");
    }
    s.origin_ns = *o.start_at_ns;
  } else {
    s.origin_ns = now_ns + s.period_ns;
  }
  return s;
}

namespace {

void check_writable(const std::string& path) {
  const std::string probe = path + ".tmp";
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw std::invalid_argument("--trace " + path + ": cannot create " + probe + ": " + std::strerror(errno));
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace

int run_canary(const std::string& canary, const CanaryOptions& o, const RequestFn& request,
               const std::function<void(nlohmann::json&)>& extra) {
  MonotonicClock clock;
  const Schedule schedule = make_schedule(o, clock.now_ns());
  check_writable(o.trace_path);
  install_stop_handlers();
  // Timer slack 1 ns instead of the default 50 us for SCHED_OTHER: the kernel may
  // otherwise defer each absolute wake-up by up to the slack, which would read as wake
  // delay. Failure is not fatal; the summary reports the slack in effect.
  (void)::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  const int slack = ::prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);
  TraceBuffer buffer(static_cast<std::size_t>(schedule.requests));
  ThreadUsage usage;
  // The journal: every finished request is appended as it completes, so a canary killed
  // mid-run (OOM, SIGKILL) leaves its finished requests (TRACE.md "Journal").
  const std::string journal = journal_path(o.trace_path);
  const int journal_fd = ::open(journal.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (journal_fd < 0)
    throw std::runtime_error("--trace " + o.trace_path + ": cannot create the journal " + journal + ": " +
                             std::strerror(errno));
  {
    const std::string head =
        encode_journal_header(TraceHeader{canary, schedule.period_ns, schedule.origin_ns, 0});
    if (::write(journal_fd, head.data(), head.size()) != static_cast<ssize_t>(head.size()))
      throw std::runtime_error("journal " + journal + ": header write failed: " + std::strerror(errno));
  }
  buffer.journal_to(journal_fd);

  std::string error;
  LoopResult result;
  try {
    result = run_periodic(schedule, clock, usage, buffer, request, [] { return stop_requested(); });
  } catch (const std::exception& e) {
    error = e.what();
  }
  const bool loop_threw = !error.empty();

  TraceHeader header{canary, schedule.period_ns, schedule.origin_ns, buffer.not_recorded()};
  int rc = error.empty() ? 0 : 1;
  bool trace_written = true;
  try {
    write_trace(o.trace_path, header, buffer.records());
    ::close(journal_fd);
    ::unlink(journal.c_str());  // the complete trace supersedes the journal
  } catch (const std::exception& e) {
    trace_written = false;
    error += (error.empty() ? "" : "; ") + std::string(e.what());
    rc = 1;
  }

  nlohmann::json j = summarize(header, buffer.records());
  j["requests_planned"] = schedule.requests;
  j["origin_ns"] = schedule.origin_ns;
  const int sig = stop_signal();
  j["stopped_by"] = loop_threw       ? "error"
                     : result.stopped ? (sig == SIGINT ? "SIGINT" : "SIGTERM")
                                      : "schedule_end";
  j["timer_slack_ns"] = slack;
  j["trace"] = o.trace_path;
  j["trace_written"] = trace_written;
  j["journal_errors"] = buffer.journal_errors();
  j["error"] = error.empty() ? nlohmann::json(nullptr) : nlohmann::json(error);
  if (extra) extra(j);
  std::cout << j.dump() << std::endl;
  if (!error.empty()) std::cerr << "canary-" << canary << ": " << error << std::endl;
  return rc;
}

}  // namespace canaries
