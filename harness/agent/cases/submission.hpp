#pragma once
// POST /v1/cases (harness/agent/API.md): the spec's checks, the busy slot, the unclean
// mark, the submission's qualification, the case's files, then its executor. Every refusal
// comes before anything is created; a case that ends before its executor started reads
// cancelled or infra_failed.
#include "harness/agent/cases/executor_watcher.hpp"
#include "harness/agent/cases/registry.hpp"
#include "harness/agent/http/agent_options.hpp"
#include "harness/agent/cases/unclean_mark.hpp"

#include <httplib.h>

#include <optional>
#include <string>
#include <vector>

#include "harness/case/spec/spec.hpp"

namespace harness::agent {

/// The first check of POST /v1/cases, before anything is claimed or created: the accepted
/// spec, or the 400 it gets (`error` and the `field` it names). Shared by the agent and by the
/// tests' fake agent (tests/common/fake_agent.hpp), so that both refuse the same specs.
struct CheckedSpec {
  std::optional<harness::case_::CaseSpec> spec;  ///< set when accepted
  std::string error;                             ///< the 400's "error" when refused
  std::string field;                             ///< the 400's "field" ("" when none)
  bool accepted() const { return spec.has_value(); }
};

/// Checks `body`'s limits before it is parsed (spec_body_limits.hpp), then SPEC.md
/// (harness::case_::parse_spec), the path rule (API.md "Paths":
/// backend.swapfile_path and canaries.sqlite_db_path under one of `allowed_dirs`, the agent's
/// data directory and its --allow-path directories) and the case-id rule, in that order.
CheckedSpec check_submitted_spec(const std::string& body, const std::vector<std::string>& allowed_dirs);

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
