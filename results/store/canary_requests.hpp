#pragma once
// canary_requests (results/schema.sql; stored under the case's key in canary_requests_rows,
// version 5): every scheduled request of both canaries (canaries/TRACE.md), CLOCK_MONOTONIC ns
// of the guest. wake delay = wake_ns - scheduled_ns; service time = completion_ns - wake_ns;
// response = completion_ns - scheduled_ns.
//
// Errors: DbError on any SQLite failure.
#include "results/db.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace results {

/// One canary request.
struct CanaryRequestRow {
  std::string canary;  ///< compute | sqlite
  std::int64_t seq = 0;
  std::int64_t scheduled_ns = 0;
  std::optional<std::int64_t> wake_ns, completion_ns;  ///< completion nullopt: never completed
  /// getrusage(RUSAGE_THREAD) deltas over the request: minor and major faults, voluntary and
  /// involuntary context switches.
  std::optional<std::int64_t> minflt, majflt, nvcsw, nivcsw;
};

/// Calls `row` with each request of `case_id` and `canary`, in seq order (the hot path of the
/// analysis: no vector of rows is built).
void for_each_canary_request(Db& db, const std::string& case_id, const std::string& canary,
                             const std::function<void(const CanaryRequestRow&)>& row);

/// The responses (completion_ns - scheduled_ns, ns) of `case_id`'s `canary` requests scheduled in
/// its pressure phase (from its start to its end, or on when it did not end), in storage order;
/// nullopt for a request that never completed.
std::vector<std::optional<std::int64_t>> pressure_responses(Db& db, const std::string& case_id,
                                                            const std::string& canary);

/// Inserts the requests of the case whose key is `case_key` (cases.case_key), one statement
/// prepared for all of them.
class CanaryRequestWriter {
 public:
  CanaryRequestWriter(Db& db, std::int64_t case_key);
  void write(const CanaryRequestRow& r);

 private:
  Stmt insert_;
  std::int64_t key_;
};

}  // namespace results
