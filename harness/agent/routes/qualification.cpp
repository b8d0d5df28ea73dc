// The agent's qualification (see qualification.hpp).
#include "harness/agent/routes/qualification.hpp"

#include "harness/agent/http/answer.hpp"
#include "harness/agent/cases/child.hpp"
#include "harness/agent/http/json_text.hpp"
#include "harness/case/spec/qualification_options.hpp"
#include "harness/json/limited_parse.hpp"
#include "qualify/qualify.hpp"

#include <stdexcept>

namespace harness::agent {
using nlohmann::json;
namespace {

json failed_report(const std::string& reason) {
  return json{{"passed", false}, {"checks", json::array()}, {"reasons", {reason}}};
}

/// The report printed by --qualify-cmd.
json command_report(const std::string& cmd) {
  int rc = -1;
  try {
    const CommandOutput run = capture_output(split_command(cmd), kStateFileMax);
    rc = run.exit_code;
    json j = harness::json::parse(run.out, "qualification command output");
    if (!j.is_object() || !j.contains("passed")) throw std::runtime_error("no 'passed' field");
    return j;
  } catch (const std::exception& e) {
    // A failed qualification is an outcome (412 with the reason), not an error of the agent.
    return failed_report("qualification command '" + cmd + "' " +
                         (rc < 0 ? std::string("could not be run") : "exited " + std::to_string(rc)) +
                         " without a JSON report: " + e.what());
  }
}

}  // namespace

json run_qualification(const AgentOptions& o, const harness::case_::CaseSpec* spec,
                       const std::filesystem::path& out_dir) {
  if (!o.qualify_cmd.empty()) return command_report(o.qualify_cmd);
  qualify::Options q;
  if (spec) {
    q = harness::case_::case_qualification_options(*spec, "/", out_dir.string());
  } else {
    q.swapfile_path = o.swapfile;
    q.vcpus = o.vcpus;
    q.memory_mib = o.memory_mib;
    q.disk_path = (std::filesystem::path(o.state_dir) / "cases").string();
  }
  try {
    return qualify::run(q).to_json();
  } catch (const std::exception& e) {
    return failed_report(std::string("qualification failed: ") + e.what());
  }
}

bool qualification_passed(const json& report) { return report.contains("passed") && report["passed"] == true; }

json reasons_of(const json& report) {
  if (report.contains("reasons") && report["reasons"].is_array() && !report["reasons"].empty()) return report["reasons"];
  json r = json::array();
  if (report.contains("checks") && report["checks"].is_array())
    for (const auto& c : report["checks"])
      if (c.is_object() && c.contains("passed") && c["passed"] == false && !(c.contains("required") && c["required"] == false))
        r.push_back(str_or(c, "name", "?") + ": " + str_or(c, "found", ""));
  if (r.empty()) r.push_back("qualification report says passed=false");
  return r;
}

void serve_qualification(Registry& reg, const AgentOptions& o, httplib::Response& res) {
  {
    std::lock_guard<std::mutex> lk(reg.mu);
    if (!reg.busy.idle()) {
      // Qualification probes memory.reclaim and swapon: never concurrently with a case,
      // a submission's qualification or another qualification.
      if (reg.last_report.is_null()) return send_error(res, 409, reg.busy.message() + "; no earlier report", "");
      json j = reg.last_report;
      j["stale_while_busy"] = true;
      return send_json(res, j);
    }
    reg.busy = Busy{Busy::Holder::Qualification, "", -1};
  }
  json r = run_qualification(o, nullptr, {});
  {
    std::lock_guard<std::mutex> lk(reg.mu);
    reg.last_report = r;
    if (reg.busy.holder == Busy::Holder::Qualification) reg.busy = Busy{};
  }
  send_json(res, r);
}

}  // namespace harness::agent
