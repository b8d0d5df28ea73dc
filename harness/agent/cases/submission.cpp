// POST /v1/cases (see submission.hpp).
#include "harness/agent/cases/submission.hpp"

#include "harness/agent/http/answer.hpp"
#include "harness/agent/cases/case_end.hpp"
#include "harness/agent/cases/case_id.hpp"
#include "harness/case/run/durable_file.hpp"
#include "harness/agent/routes/qualification.hpp"
#include "harness/agent/cases/spec_body_limits.hpp"
#include "harness/case/spec/spec.hpp"

#include <memory>
#include <optional>

namespace fs = std::filesystem;

namespace harness::agent {
using nlohmann::json;
namespace {

/// The 412 of a VM marked unclean.
void refuse_unclean(httplib::Response& res, const json& mark) {
  const std::string msg = UncleanMark::message(mark);
  send_error(res, 412, msg, "", {{"reasons", {"unclean_restoration: " + msg}}});
}

/// The spec of `body` when check_submitted_spec() accepts it; else nullopt with the 400 answered.
std::optional<harness::case_::CaseSpec> checked_spec(const SubmissionContext& ctx, const std::string& body,
                                                     httplib::Response& res) {
  auto checked = check_submitted_spec(body, ctx.allowed_dirs);
  if (!checked.accepted()) send_error(res, 400, checked.error, checked.field);
  return std::move(checked.spec);
}

/// Takes the busy slot for a new case `s` (queued); nullptr with 412/409 answered when the
/// mark kept in memory, the slot or the id refuses it.
std::shared_ptr<CaseRec> claim(const SubmissionContext& ctx, const harness::case_::CaseSpec& s, httplib::Response& res) {
  if (json held = ctx.mark.held_in_memory(); !held.is_null()) {
    refuse_unclean(res, held);
    return nullptr;
  }
  std::lock_guard<std::mutex> lk(ctx.reg.mu);
  if (!ctx.reg.busy.idle()) {
    send_error(res, 409, ctx.reg.busy.message(), "", {{"running_case_id", ctx.reg.busy.holder_id()}});
    return nullptr;
  }
  if (ctx.reg.cases.count(s.case_id)) {
    send_error(res, 409, "case id " + s.case_id + " already used on this agent", "case_id");
    return nullptr;
  }
  auto c = std::make_shared<CaseRec>();
  c->id = s.case_id;
  c->dir = ctx.reg.case_dir(s.case_id);
  c->grace_s = ctx.opts.cancel_grace_s > 0 ? ctx.opts.cancel_grace_s : s.restoration_timeout_s + 60;
  ctx.reg.busy = Busy{Busy::Holder::Case, s.case_id, -1};  // no other submission, qualification or reboot starts
  ctx.reg.cases[s.case_id] = c;
  return c;
}

/// Forgets the claimed case `id` (refused after the claim: nothing was created).
void release(Registry& reg, const std::string& id) {
  std::lock_guard<std::mutex> lk(reg.mu);
  reg.cases.erase(id);
  if (reg.busy.is_case(id)) reg.busy = Busy{};
  reg.bump();
}

/// The checks on disk and the qualification of a claimed case (without the lock: the busy
/// slot keeps everything else out meanwhile); false with the answer set and the claim
/// released when one refuses it.
bool qualified(const SubmissionContext& ctx, const harness::case_::CaseSpec& s, const std::shared_ptr<CaseRec>& c,
               httplib::Response& res) {
  if (json u = ctx.mark.read(); !u.is_null()) {
    release(ctx.reg, c->id);
    refuse_unclean(res, u);
    return false;
  }
  std::error_code ec;
  if (fs::exists(c->dir, ec)) {
    release(ctx.reg, c->id);
    send_error(res, 409, "case id " + c->id + " already used on this agent", "case_id");
    return false;
  }
  {
    std::lock_guard<std::mutex> lk(ctx.reg.mu);
    c->state = CaseState::Qualifying;
    ctx.reg.bump();
  }
  const json report = run_qualification(ctx.opts, &s, c->dir / "out");
  {
    std::lock_guard<std::mutex> lk(ctx.reg.mu);
    ctx.reg.last_report = report;
  }
  if (qualification_passed(report)) return true;
  release(ctx.reg, c->id);
  send_error(res, 412, "host not qualified", "", {{"reasons", reasons_of(report)}});
  return false;
}

/// Writes the case's files and starts its executor (or ends it cancelled when a cancel came
/// first); answers 202 or 500.
void start(const SubmissionContext& ctx, const std::string& body, const std::shared_ptr<CaseRec>& c,
           httplib::Response& res) {
  try {
    fs::create_directories(c->dir / "out");
    harness::case_::write_file_durably(c->dir / "spec.json", body);
  } catch (const std::exception& e) {
    end_unstarted(ctx.reg, c, CaseState::InfraFailed, std::string("could not write the case's spec: ") + e.what());
    return send_error(res, 500, std::string("could not write the case's spec: ") + e.what(), "");
  }
  bool cancelled = false;
  {
    std::lock_guard<std::mutex> lk(ctx.reg.mu);
    cancelled = c->cancel_requested;
  }
  if (cancelled) {  // cancelled while queued or qualifying: the executor never starts
    end_unstarted(ctx.reg, c, CaseState::Cancelled, "before the executor started");
    return send_json(res, {{"case_id", c->id}, {"state", "cancelled"}}, 202);
  }
  std::vector<std::string> argv = ctx.executor;
  argv.insert(argv.end(), {"--spec", (c->dir / "spec.json").string(), "--out", (c->dir / "out").string()});
  try {
    ctx.watcher.start(c, argv);
  } catch (const std::exception& e) {
    end_unstarted(ctx.reg, c, CaseState::InfraFailed, std::string("could not start the executor: ") + e.what());
    return send_error(res, 500, std::string("could not start the executor: ") + e.what(), "");
  }
  send_json(res, {{"case_id", c->id}}, 202);
}

}  // namespace

CheckedSpec check_submitted_spec(const std::string& body, const std::vector<std::string>& allowed_dirs) {
  CheckedSpec out;
  if (const SpecBodyScan scan = scan_spec_body(body); !scan.ok()) {
    out.error = "request body: " + scan.why;
    out.field = scan.field;
    return out;
  }
  harness::case_::CaseSpec s;
  try {
    s = harness::case_::parse_spec(body, "request body");
  } catch (const harness::case_::SpecError& e) {
    out.error = e.what();
    out.field = e.field();
    return out;
  }
  for (const auto& [field, path] : {std::pair<std::string, std::string>{"backend.swapfile_path", s.backend.swapfile_path},
                                    {"canaries.sqlite_db_path", s.canaries.sqlite_db_path}})
    if (auto why = harness::case_::check_path_inside(path, allowed_dirs); !why) {
      out.error = "request body: field '" + field + "': " + path + " " + why.error().message;
      out.field = field;
      return out;
    }
  if (!safe_case_id(s.case_id)) {
    out.error = "case_id must match [A-Za-z0-9._-]{1,128} and not be . or ..";
    out.field = "case_id";
    return out;
  }
  out.spec = std::move(s);
  return out;
}

void submit_case(const SubmissionContext& ctx, const std::string& body, httplib::Response& res) {
  const auto s = checked_spec(ctx, body, res);
  if (!s) return;
  const auto c = claim(ctx, *s, res);
  if (!c) return;
  if (!qualified(ctx, *s, c, res)) return;
  start(ctx, body, c, res);
}

}  // namespace harness::agent
