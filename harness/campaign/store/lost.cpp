// A case lost after its pressure phase began (see lost.hpp).
#include "harness/campaign/store/lost.hpp"

#include "harness/campaign/store/states.hpp"
#include "results/store/cases.hpp"

namespace harness::campaign {
namespace {

/// The cases row of lost case `k`: the schedule's columns, `spec`, the lost record `lost` as
/// outcome_json and where and by which build it ran ("" / nullopt: NULL).
results::CaseRow lost_case_row(const ScheduledCase& k, const std::string& campaign, const AttemptRecord& a,
                               const LostCase& why, const nlohmann::json& spec, const nlohmann::json& lost) {
  const auto text = [](const std::string& s) { return s.empty() ? std::nullopt : std::optional<std::string>(s); };
  const auto flag = [](const std::optional<bool>& b) {
    return b ? std::optional<std::int64_t>(*b ? 1 : 0) : std::nullopt;
  };
  results::CaseRow c;
  c.case_id = k.case_id;
  c.campaign = campaign;
  c.vm = k.vm;
  c.regime = k.regime;
  c.repeat = k.repeat;
  c.triplet_id = k.triplet_id;
  c.configuration = k.configuration;
  c.dose_bytes = k.dose_bytes;
  c.attempt = a.attempt;
  c.status = kLostStatus;
  c.error = why.reason;
  c.started_unix_ns = a.started_unix_ns;
  c.ended_unix_ns = a.ended_unix_ns;
  c.spec_json = spec.dump();
  c.outcome_json = nlohmann::json{{"lost", lost}}.dump();
  c.source_commit = text(why.source_commit);
  c.source_dirty = flag(why.source_dirty);
  c.accelerator = text(why.ran_on.accelerator);
  c.host_uri = text(why.ran_on.host_uri);
  c.overcommitted = flag(why.ran_on.overcommitted);
  c.engine_kind = text(why.ran_on.engine_kind);
  return c;
}

}  // namespace

void record_lost(results::Db& db, const ScheduledCase& k, const std::string& campaign, const AttemptRecord& a,
                 const LostCase& why) {
  const nlohmann::json lost = {
      {"phase", why.phase.empty() ? nlohmann::json(nullptr) : nlohmann::json(why.phase)},
      {"last_seen_unix_ns", why.last_seen_unix_ns ? nlohmann::json(why.last_seen_unix_ns) : nlohmann::json(nullptr)},
      {"reason", why.reason}};
  nlohmann::json spec = k.spec;
  spec["case_id"] = k.case_id;
  AttemptRecord rec = a;
  if (!rec.detail.is_object()) rec.detail = nlohmann::json::object();
  rec.detail.update(lost);  // keeps what the runner recorded (takeovers, agent case id)
  db.transaction([&] {
    results::delete_case(db, k.case_id);  // an earlier infra_failed attempt's rows
    results::insert_case(db, lost_case_row(k, campaign, a, why, spec, lost));
    record_attempt_outcome(db, rec, kLostStatus, why.reason);
  });
}

}  // namespace harness::campaign
