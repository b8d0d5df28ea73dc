#pragma once
// POST /v1/cases (harness/agent/API.md): the spec's checks, the busy slot, the unclean
// mark, the submission's qualification, the case's files, then its executor. Every refusal
// comes before anything is created; a case that ends before its executor started reads
// cancelled or infra_failed.
#include "harness/agent/executor_watcher.hpp"
#include "harness/agent/registry.hpp"
#include "harness/agent/server.hpp"
#include "harness/agent/unclean_mark.hpp"

#include <httplib.h>

#include <string>
#include <vector>

namespace harness::agent {

/// What a submission works with (all owned by the server).
struct SubmissionContext {
  Registry& reg;
  const AgentOptions& opts;
  const std::vector<std::string>& allowed_dirs;  ///< data_dir + allow_paths (API.md "Paths")
  UncleanMark& mark;
  const std::vector<std::string>& executor;      ///< command prefix; --spec FILE --out DIR appended
  ExecutorWatcher& watcher;
};

/// Answers POST /v1/cases with `body`: 400 bad spec (naming the field) or path outside the
/// allowed directories or bad case id; 412 VM marked unclean; 409 busy (running_case_id) or
/// case id already used; 412 host not qualified (reasons); 500 the case's files or its
/// executor could not be made (the case then reads infra_failed); 202 {"case_id"} with the
/// executor started, or 202 {"case_id","state":"cancelled"} when a cancel came first.
void submit_case(const SubmissionContext& ctx, const std::string& body, httplib::Response& res);

}  // namespace harness::agent
