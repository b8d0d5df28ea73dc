// Canary traces and workload output into the bundle (trace_import.hpp).
#include "harness/case/run/trace_import.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "canaries/trace_file.hpp"

namespace harness::case_ {

namespace {
const ChildRecord* find(const std::vector<ChildRecord>& children, const std::string& name) {
  for (const auto& c : children)
    if (c.name == name) return &c;
  return nullptr;
}
}  // namespace

TraceImport import_traces(const std::vector<ChildRecord>& children, const std::string& work_dir,
                          std::optional<std::int64_t> fg_oom_kills) {
  TraceImport out;
  for (const char* name : {"compute", "sqlite"}) {
    const std::string prog = std::string("canary-") + name;
    if (!find(children, prog)) continue;
    const std::string path = (std::filesystem::path(work_dir) / (prog + ".trace")).string();
    CanaryTraceCount count;
    try {
      canaries::TraceFile tf;
      try {
        tf = canaries::read_trace(path);
      } catch (const canaries::TraceError& e) {
        count.trace_error = e.what();
        tf = canaries::read_journal(canaries::journal_path(path));
        count.from_journal = true;
      }
      for (const auto& r : tf.records) {
        CanaryRequestRow row;
        row.canary = name;
        row.seq = static_cast<std::int64_t>(r.seq);
        row.scheduled_ns = r.scheduled_ns;
        row.wake_ns = r.wake_ns;
        if (r.completion_ns != 0) row.completion_ns = r.completion_ns;
        row.minflt = r.minflt;
        row.majflt = r.majflt;
        row.nvcsw = r.nvcsw;
        row.nivcsw = r.nivcsw;
        out.requests.push_back(row);
      }
      count.requests = tf.records.size();
      count.not_recorded = tf.header.not_recorded;
      count.origin_ns = tf.header.origin_ns;
      count.period_ns = tf.header.period_ns;
    } catch (const std::exception& e) {
      count = CanaryTraceCount{};
      count.error = e.what();
      // An OOM-killed canary may leave nothing: that is an outcome, not an infra failure.
      const bool oom_killed = fg_oom_kills && *fg_oom_kills > 0;
      if (!oom_killed && !out.failure)
        out.failure = fmt::format("{} left no readable trace ({}) and fg saw no OOM kill", prog, e.what());
    }
    out.counts[name] = count;
  }
  for (const auto& c : children) {
    auto text = read_output(c.stdout_path);
    if (!text.empty()) out.artifacts.emplace_back(c.name + ".json", text);
    auto err = read_output(c.stderr_path, 64 << 10);
    if (!err.empty()) out.artifacts.emplace_back(c.name + ".stderr", err);
  }
  return out;
}

}  // namespace harness::case_
