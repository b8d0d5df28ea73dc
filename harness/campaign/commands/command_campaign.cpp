// The campaign a command plans, runs or checks (command_campaign.hpp).
#include "harness/campaign/commands/command_campaign.hpp"

#include "harness/campaign/check/ab_same_kernel.hpp"
#include "harness/campaign/store/campaign_db.hpp"
#include "harness/campaign/check/check_sequential.hpp"
#include "results/store/meta.hpp"
#include "harness/campaign/runner/preflight.hpp"
#include "harness/pool/pool.hpp"

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
  return results::meta_json_int(*db, "schedule_json", "$.dose_from_pilot.pipeline_test.declared") == 1;
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

/// The run's summary line and its unreachable and unusable guests, on `out`.
void print_run_summary(const RunSummary& s, std::FILE* out) {
  std::fprintf(out, "run: %d planned, %d completed, %d lost, %d left infra_failed, %d pending; %d attempt(s) in this run",
               s.planned, s.completed, s.lost, s.infra_failed, s.pending, s.attempts_this_run);
  if (s.taken_over) std::fprintf(out, ", %d taken over from an interrupted runner", s.taken_over);
  std::fprintf(out, "\n");
  for (const auto& u : s.unreachable)
    std::fprintf(out, "unreachable: %s; its cases stay pending (run the same command again once it answers)\n",
                 u.c_str());
  for (const auto& u : s.unusable)
    std::fprintf(out, "unusable: %s; its cases stay pending (run the same command again once the mark is cleared)\n",
                 u.c_str());
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
  const auto why = check_variant_kernels(c, env.image_dir());
  if (why) return false;
  std::fprintf(env.err, "harness %s: %s", command, why.error().message.c_str());
  return true;
}

std::optional<RunSummary> run_and_print(const Campaign& c, RunOptions o, const CommandEnv& env) {
  std::fflush(env.out);  // the runner's progress goes to stderr: what was printed so far comes first
  std::string table;
  o.preflight_out = &table;
  try {
    auto s = run_campaign(c, o);
    if (!table.empty()) std::fprintf(env.out, "qualification before scheduling:\n%s", table.c_str());
    print_run_summary(s, env.out);
    return s;
  } catch (const PreflightRefused& e) {
    std::fprintf(env.err, "harness: %s", e.what());
  } catch (const harness::pool::CapacityError& e) {
    std::fprintf(env.err, "harness: %s", e.what());
  }
  return std::nullopt;  // refused before any case was submitted: said above
}

}  // namespace harness::campaign
