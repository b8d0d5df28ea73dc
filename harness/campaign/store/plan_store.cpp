// The plan stored in a campaign DB (see plan_store.hpp).
#include "harness/campaign/store/plan_store.hpp"

#include "harness/campaign/store/db_identity.hpp"
#include "harness/campaign/store/states.hpp"
#include "harness/case/control/arm.hpp"
#include "harness/case/control/policy.hpp"
#include "harness/digest/sha256.hpp"
#include "harness/kernel/wall_clock.hpp"
#include "results/store/arms.hpp"
#include "results/store/meta.hpp"
#include "results/store/schedule.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <vector>

namespace harness::campaign {
namespace {

/// The arm case `k` runs, as canonical JSON (harness/case/control/arm.hpp): resolve_arm over the
/// planned spec (the rest of the spec is not checked here: a plan's build pin may still be
/// unresolved). Throws std::invalid_argument naming the case when the arm cannot be resolved.
nlohmann::json planned_arm(const ScheduledCase& k) {
  const nlohmann::json* policy = k.spec.is_object() && k.spec.contains("policy") ? &k.spec.at("policy") : nullptr;
  try {
    const auto arm = harness::case_::resolve_arm(k.configuration, policy, k.dose_bytes);
    return harness::case_::arm_json(k.configuration, arm.policy, arm.params);
  } catch (const harness::case_::SpecError& e) {
    throw std::invalid_argument("plan: case " + k.case_id + ": field " + e.field() + ": " + e.what());
  }
}

/// The report order of the plan's arms: the plan JSON's `arms` list when it has one, else the
/// study's order (policy.hpp study_arms()).
std::vector<std::string> planned_arm_order(const Schedule& s) {
  std::vector<std::string> order;
  const auto doc = nlohmann::json::parse(s.json_text, nullptr, false);
  if (doc.is_object() && doc.contains("arms") && doc.at("arms").is_array()) {
    for (const auto& a : doc.at("arms"))
      if (a.is_string()) order.push_back(a.get<std::string>());
      else if (a.is_object() && a.contains("name") && a.at("name").is_string()) order.push_back(a.at("name").get<std::string>());
  } else {
    order = harness::case_::study_arms();
  }
  return order;
}

/// Writes one row of the table arms (results/schema.sql, version 6) per arm of the plan's cases:
/// name = the cases' configuration; policy and params of each case (planned_arm), params {} when
/// the arm's cases disagree (a pilot's doses: the dose is per case, in dose_bytes); sha256 of the
/// arm's canonical JSON (harness/case/control/arm.hpp); position = planned_arm_order; an arm it
/// does not name comes after them in the order of its first case. Throws std::invalid_argument
/// (planned_arm, or two cases of one arm naming different policies).
void store_arms(results::Db& db, const Schedule& s) {
  struct PlannedArm {
    std::string policy;
    nlohmann::json params;  ///< null once two cases of the arm disagree
  };
  std::map<std::string, PlannedArm> arms;
  std::vector<std::string> names;  // in the order of their first case
  for (const auto& k : s.cases) {
    const nlohmann::json arm = planned_arm(k);
    const std::string policy = arm.at("policy").get<std::string>();
    auto [it, first] = arms.try_emplace(k.configuration, PlannedArm{policy, arm.at("params")});
    if (first) {
      names.push_back(k.configuration);
      continue;
    }
    if (it->second.policy != policy)
      throw std::invalid_argument("plan: arm '" + k.configuration + "' runs policy '" + it->second.policy +
                                  "' in one case and '" + policy + "' in case " + k.case_id);
    if (!it->second.params.is_null() && it->second.params != arm.at("params")) it->second.params = nullptr;
  }
  const std::vector<std::string> order = planned_arm_order(s);
  const auto rank = [&](const std::string& n) {
    return static_cast<std::size_t>(std::find(order.begin(), order.end(), n) - order.begin());
  };
  std::stable_sort(names.begin(), names.end(), [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  std::vector<results::ArmRow> rows;
  for (const auto& name : names) {
    const PlannedArm& a = arms.at(name);
    const nlohmann::json params = a.params.is_null() ? nlohmann::json::object() : a.params;
    const nlohmann::json canonical = {{"name", name}, {"params", params}, {"policy", a.policy}};
    rows.push_back({name, a.policy, params.dump(), harness::digest::sha256_hex(canonical.dump()),
                    static_cast<std::int64_t>(rows.size())});
  }
  results::insert_arms(db, rows);
}

/// The plan's campaign_meta keys (store_plan).
void store_plan_meta(results::Db& db, const Campaign& c, const Schedule& s) {
  results::put_meta(db, "name", c.name);
  results::put_meta(db, "kind", c.kind);
  db_tag(db);
  results::put_meta(db, "seed", std::to_string(c.seed));
  results::put_meta(db, "campaign_file", c.file);
  if (c.base_dir) results::put_meta(db, "campaign_dir", *c.base_dir);
  results::put_meta(db, "campaign_yaml", c.yaml_text);
  results::put_meta(db, "campaign_sha256", harness::digest::sha256_hex(c.yaml_text));
  results::put_meta(db, "schedule_json", s.json_text);
  results::put_meta(db, "schedule_sha256", s.sha256_hex);
  results::put_meta(db, "planned_unix_ns", std::to_string(harness::kernel::unix_now_ns()));
}

}  // namespace

bool has_plan(results::Db& db) { return results::meta_value(db, "schedule_sha256").has_value(); }

Campaign stored_campaign(results::Db& db, const std::string& db_path) {
  const auto yaml = results::has_table(db, "campaign_meta") ? results::meta_value(db, "campaign_yaml") : std::nullopt;
  if (!yaml) throw std::runtime_error(db_path + ": holds no plan (give the campaign FILE)");
  const auto file = results::meta_value(db, "campaign_file");
  std::optional<std::string> dir = results::meta_value(db, "campaign_dir");
  if (!dir && file && std::filesystem::path(*file).is_absolute())  // planned before campaign_dir was stored
    dir = std::filesystem::path(*file).parent_path().string();
  return parse_campaign_in(*yaml, file.value_or(db_path) + " (as stored in " + db_path + ")", dir);
}

void store_plan(results::Db& db, const Campaign& c, const Schedule& s) {
  db.transaction([&] {
    if (auto old = results::meta_value(db, "schedule_sha256")) {
      if (*old == s.sha256_hex) return;
      throw ScheduleTampered(db.path() + ": already holds a different plan (schedule sha256 " + *old +
                             ", new plan " + s.sha256_hex + "); use a new DB for a changed campaign");
    }
    store_plan_meta(db, c, s);
    store_arms(db, s);  // before the schedule: its rows must name an arm (schema.sql triggers)
    results::ScheduleWriter schedule(db);
    for (const auto& k : s.cases)
      schedule.write({k.case_id, k.ordinal, k.vm, k.regime, k.repeat, k.triplet_id, k.configuration, k.dose_bytes,
                      kPendingState});
  });
}

Schedule load_verified_plan(results::Db& db) {
  const auto json = results::meta_value(db, "schedule_json");
  const auto hash = results::meta_value(db, "schedule_sha256");
  if (!json || !hash) throw ScheduleTampered(db.path() + ": holds no plan (run `harness plan` first)");
  Schedule s = schedule_from_json(*json);
  if (s.sha256_hex != *hash)
    throw ScheduleTampered(db.path() + ": schedule changed after planning: SHA-256 of the stored schedule is " +
                           s.sha256_hex + ", preregistered " + *hash);
  const auto rows = results::read_schedule(db);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& q = rows[i];
    if (i >= s.cases.size())
      throw ScheduleTampered(db.path() + ": schedule table has extra row '" + q.case_id + "' not in the plan");
    const auto& k = s.cases[i];
    const bool same = q.case_id == k.case_id && q.ordinal == k.ordinal && q.vm == k.vm && q.regime == k.regime &&
                      q.repeat == k.repeat && q.triplet_id == k.triplet_id && q.configuration == k.configuration &&
                      q.dose_bytes == k.dose_bytes;
    if (!same)
      throw ScheduleTampered(db.path() + ": schedule table row " + std::to_string(i) + " ('" + q.case_id +
                             "') differs from the preregistered plan (expected '" + k.case_id + "')");
  }
  if (rows.size() != s.cases.size())
    throw ScheduleTampered(db.path() + ": schedule table lacks " + std::to_string(s.cases.size() - rows.size()) +
                           " planned rows");
  return s;
}

}  // namespace harness::campaign
