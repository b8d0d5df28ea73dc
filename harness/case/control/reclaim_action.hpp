#pragma once
// The bounded-reclaim action: one write of the dose to bg memory.reclaim, run on its own
// thread because the write blocks (seconds under TCG) and telemetry must keep ticking.
// Readings (kernel 6.1 memcg stats flush ~every 2 s; a read flushes when many updates
// are pending):
//   before:  bg memory.stat pgsteal/pgscan (and pgsteal_proactive when present),
//            bg memory.current, just before write(2)
//   after:   the same, right after write(2) returned
//   settled: pgsteal/pgscan again `settle_ns` (default 2.2 s) after the write returned.
// The achieved figures are computed in reclaim_record.hpp.
#include <cstdint>
#include <optional>
#include <thread>

#include "harness/case/control/reclaim_record.hpp"
#include "harness/kernel/cgroup.hpp"

namespace harness::case_ {

class ReclaimAction {
 public:
  /// `settle_ns` default 2.2 s (a bit over the 2 s flush period).
  explicit ReclaimAction(harness::kernel::Cgroup bg, std::int64_t settle_ns = 2'200'000'000);
  ~ReclaimAction();
  ReclaimAction(const ReclaimAction&) = delete;
  ReclaimAction& operator=(const ReclaimAction&) = delete;

  /// Starts the thread (once; std::logic_error if already started). `concurrent_rate`:
  /// bg pgsteal over the windows before the trigger (pgsteal_rate_before), or nullopt.
  void start(std::int64_t requested_bytes, std::optional<PgstealRate> concurrent_rate = std::nullopt);
  bool started() const { return thread_.joinable() || record_.has_value(); }
  /// Waits for the thread and returns the record (nullopt if never started).
  std::optional<ReclaimRecord> join();

  /// The synchronous body (what the thread runs), exposed for tests on a fixture tree.
  static ReclaimRecord run(const harness::kernel::Cgroup& bg, std::int64_t requested_bytes, std::int64_t settle_ns,
                           std::optional<PgstealRate> concurrent_rate = std::nullopt);

 private:
  harness::kernel::Cgroup bg_;
  std::int64_t settle_ns_;
  std::thread thread_;
  std::optional<ReclaimRecord> record_;
};

}  // namespace harness::case_
