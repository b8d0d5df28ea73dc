#pragma once
// The agent's qualification (harness/agent/API.md "A case's states", GET /v1/qualification):
// a submission's, with the executor's own options, and the agent's own for GET, never
// concurrently with itself, a submission or a case (the busy slot).
#include "harness/agent/cases/registry.hpp"
#include "harness/agent/http/agent_options.hpp"
#include "harness/case/spec/spec.hpp"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <filesystem>

namespace harness::agent {

/// The qualification report (`harness qualify --json` shape): --qualify-cmd's stdout when
/// o.qualify_cmd is set (a command that prints no JSON object with "passed" gives passed
/// false naming the command and its exit code), else qualify::run() with the case's options
/// (case_qualification_options: the executor's own, `out_dir` for the free space) when
/// `spec` is given, or the agent's flags (swapfile, vcpus, memory_mib, state_dir/cases).
/// A qualification that throws gives passed false with the reason. Never throws.
nlohmann::json run_qualification(const AgentOptions& o, const harness::case_::CaseSpec* spec,
                                 const std::filesystem::path& out_dir);

/// True when `report` says "passed": true.
bool qualification_passed(const nlohmann::json& report);

/// The 412 `reasons` of a failed report: its "reasons" when non-empty, else "<name>:
/// <found>" of every failed check that is not marked required false, else one line saying
/// passed=false.
nlohmann::json reasons_of(const nlohmann::json& report);

/// GET /v1/qualification: takes the busy slot and answers a fresh report (kept as the
/// registry's last_report); while the slot is held, the last report with
/// "stale_while_busy": true, or 409 when there is none.
void serve_qualification(Registry& reg, const AgentOptions& o, httplib::Response& res);

}  // namespace harness::agent
