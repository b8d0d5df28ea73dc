#pragma once
// The bounded-reclaim action: one write of the dose to bg memory.reclaim, run on its own
// thread because the write blocks (seconds under TCG) and telemetry must keep ticking.
// Readings (DESIGN.md "Controller"; kernel 6.1 memcg stats flush ~every 2 s):
//   before:  bg memory.stat pgsteal/pgscan, bg memory.current
//   after:   the same, right after write(2) returned
//   settled: pgsteal/pgscan again `settle_ns` (default 2 s) after the write returned.
#include <cstdint>
#include <optional>
#include <thread>

#include "harness/case/reclaim_record.hpp"
#include "harness/kernel/cgroup.hpp"

namespace hcase {

class ReclaimAction {
 public:
  /// `settle_ns` default 2.2 s (a bit over the 2 s flush period).
  explicit ReclaimAction(kernel::Cgroup bg, std::int64_t settle_ns = 2'200'000'000);
  ~ReclaimAction();
  ReclaimAction(const ReclaimAction&) = delete;
  ReclaimAction& operator=(const ReclaimAction&) = delete;

  /// Starts the thread (once; std::logic_error if already started).
  void start(std::int64_t requested_bytes);
  bool started() const { return thread_.joinable() || record_.has_value(); }
  /// Waits for the thread and returns the record (nullopt if never started).
  std::optional<ReclaimRecord> join();

  /// The synchronous body (what the thread runs), exposed for tests on a fixture tree.
  static ReclaimRecord run(const kernel::Cgroup& bg, std::int64_t requested_bytes, std::int64_t settle_ns);

 private:
  kernel::Cgroup bg_;
  std::int64_t settle_ns_;
  std::thread thread_;
  std::optional<ReclaimRecord> record_;
};

}  // namespace hcase
