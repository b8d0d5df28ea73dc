#pragma once
// Importing what the workloads left in the work dir at the end of a case: each canary's
// trace (canaries/TRACE.md) as canary_requests rows, else the journal a killed canary left
// (every request it finished: docs/PROTOCOL.md, every case keeps its outcome), and each
// workload's stdout (its JSON summary) and non-empty stderr as artifacts. A function of
// its inputs (the files and the fg OOM-kill count), tested on a work dir the test writes.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/case/run/bundle.hpp"
#include "harness/case/host/children.hpp"

namespace harness::case_ {

/// outcome_json.canary_requests.<canary>.
struct CanaryTraceCount {
  std::optional<std::string> error;  ///< neither the trace nor the journal was readable (nothing else then)
  std::size_t requests = 0;
  std::uint64_t not_recorded = 0;
  std::int64_t origin_ns = 0, period_ns = 0;
  bool from_journal = false;  ///< the canary did not finish: a truncated trace
  std::string trace_error;    ///< why the final trace was unreadable (with from_journal)
};

/// What the import produced.
struct TraceImport {
  std::vector<CanaryRequestRow> requests;
  std::map<std::string, CanaryTraceCount> counts;  ///< "compute" | "sqlite" (canaries that were started)
  std::vector<std::pair<std::string, std::string>> artifacts;  ///< (<name>.json | <name>.stderr, content)
  /// The infra_failed reason (SPEC.md "Status"): the first canary that left no readable
  /// trace while fg saw no OOM kill; nullopt otherwise.
  std::optional<std::string> failure;
};

/// Reads <work_dir>/canary-<name>.trace (else its journal) of each canary in `children`,
/// and every child's stdout (up to 1 MiB) and stderr (up to 64 KiB). `fg_oom_kills`: the
/// fg memory.events oom_kill delta of the case (nullopt = unknown): a canary without a
/// trace is a failure unless it is > 0. Never throws for unreadable files.
TraceImport import_traces(const std::vector<ChildRecord>& children, const std::string& work_dir,
                          std::optional<std::int64_t> fg_oom_kills);

}  // namespace harness::case_
