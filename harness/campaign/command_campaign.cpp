// The campaign a command plans, runs or checks (command_campaign.hpp).
#include "harness/campaign/command_campaign.hpp"

#include "harness/campaign/ab_same_kernel.hpp"
#include "harness/campaign/campaign_db.hpp"
#include "harness/campaign/check_sequential.hpp"

#include <filesystem>
#include <optional>
#include <stdexcept>

namespace harness::campaign {
namespace {

/// An existing, non-empty DB at `db_path`, opened (env.open_db); nullptr when there is none.
std::unique_ptr<results::Db> existing_db(const std::string& db_path, const CommandEnv& env) {
  if (!std::filesystem::exists(db_path) || std::filesystem::file_size(db_path) == 0) return nullptr;
  return env.open_db(db_path);
}

/// Whether the plan stored in `db_path` declared its from_pilot dose a pipeline test. False
/// when the DB does not exist or holds no plan.
bool stored_pipeline_test(const std::string& db_path, const CommandEnv& env) {
  const auto db = existing_db(db_path, env);
  if (!db) return false;
  results::Stmt q(*db, "SELECT json_extract(value, '$.dose_from_pilot.pipeline_test.declared') FROM campaign_meta "
                       "WHERE key = 'schedule_json'");
  return q.step() && !q.is_null(0) && q.int64(0) == 1;
}

/// The --max-pairs of the sequential check whose plan `db_path` stores; nullopt when the DB
/// does not exist or holds another plan.
std::optional<int> stored_sequential(const std::string& db_path, const CommandEnv& env) {
  const auto db = existing_db(db_path, env);
  if (!db) return std::nullopt;
  return stored_max_pairs(*db);
}

/// `c` as planned in `db_path`: its pipeline-test declaration and sequential cap.
Campaign as_stored_plan(Campaign c, const std::string& db_path, const CommandEnv& env) {
  c.dose_pipeline_test = stored_pipeline_test(db_path, env);
  if (const auto n = stored_sequential(db_path, env)) return sequential_campaign(c, *n);
  return c;
}

}  // namespace

Campaign pinned_campaign(const std::string& file, const CommandEnv& env) {
  auto c = load_campaign(file);
  resolve_build_pin(c, env.build.source_commit, env.build.source_dirty);
  return c;
}

Campaign run_campaign_of(const std::string& file, const std::string& db_path, const CommandEnv& env) {
  if (!file.empty()) return as_stored_plan(pinned_campaign(file, env), db_path, env);
  if (!std::filesystem::exists(db_path))
    throw std::runtime_error(db_path + ": no such campaign DB (give the campaign FILE to plan it: `harness run FILE " +
                             db_path + "`)");
  auto c = stored_campaign(*env.open_db(db_path), db_path);
  resolve_build_pin(c, env.build.source_commit, env.build.source_dirty);
  return as_stored_plan(std::move(c), db_path, env);
}

bool same_kernel_refused(const Campaign& c, const char* command, const CommandEnv& env) {
  const std::string why = same_kernel_refusal(c, env.image_dir());
  if (why.empty()) return false;
  std::fprintf(env.err, "harness %s: %s", command, why.c_str());
  return true;
}

}  // namespace harness::campaign
