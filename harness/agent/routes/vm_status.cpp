// What the agent says about its VM (see vm_status.hpp).
#include "harness/agent/routes/vm_status.hpp"

#include "harness/agent/http/answer.hpp"
#include "harness/agent/routes/reboot.hpp"

#include <harness/build_info.hpp>

namespace harness::agent {
using nlohmann::json;

void serve_health(Registry& reg, const UncleanMark& mark, httplib::Response& res) {
  Busy busy;
  {
    std::lock_guard<std::mutex> lk(reg.mu);
    busy = reg.busy;
  }
  const json u = mark.read();
  std::string refusal = u.is_null() ? "" : UncleanMark::message(u);
  if (busy.holder == Busy::Holder::OldExecutor) refusal += (refusal.empty() ? "" : "; ") + busy.message();
  send_json(res, {{"status", "ok"},
                  {"version", harness::build::kVersion},
                  {"source_commit", harness::build::kSourceCommit},
                  {"busy", !busy.idle()},
                  {"boot_id", boot_id()},
                  {"unclean", u},
                  {"accepting_cases", refusal.empty()},
                  {"refusal", refusal.empty() ? json(nullptr) : json(refusal)}});
}

void serve_clear_unclean(UncleanMark& mark, httplib::Response& res) {
  json cleared;
  const auto outcome = mark.clear(cleared);
  if (!outcome)
    return send_error(res, 500, "cannot remove " + mark.path().string() + ": " + outcome.error().message, "");
  if (*outcome == UncleanMark::Cleared::NotMarked) return send_error(res, 404, "the VM is not marked unclean", "");
  send_json(res, {{"cleared", cleared}});
}

}  // namespace harness::agent
