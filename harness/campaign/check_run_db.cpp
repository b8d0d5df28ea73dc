// The DB a `harness check` run writes (check_run_db.hpp).
#include "harness/campaign/check_run_db.hpp"

#include <chrono>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <utility>

namespace harness::campaign {
namespace {

/// Attempts and imported cases an existing DB already holds (0, 0 when it does not exist).
std::pair<std::int64_t, std::int64_t> earlier_run(const std::string& db_path, const CommandEnv& env) {
  if (!std::filesystem::exists(db_path) || std::filesystem::file_size(db_path) == 0) return {0, 0};
  env.check_target(db_path);
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  results::Stmt q(db, "SELECT (SELECT count(*) FROM attempts), (SELECT count(*) FROM cases)");
  q.step();
  return {q.int64(0), q.int64(1)};
}

}  // namespace

std::string fresh_check_db(const std::string& campaign) {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  const std::string base = campaign + "-" + stamp;
  std::string p = base + ".db";
  for (int i = 2; std::filesystem::exists(p); ++i) p = base + "-" + std::to_string(i) + ".db";
  return p;
}

std::optional<std::string> check_run_db(const std::string& campaign, const std::string& named, bool reuse,
                                        const CommandEnv& env) {
  const std::string path = named.empty() ? fresh_check_db(campaign) : named;
  const auto [attempts, cases] = earlier_run(path, env);
  if (attempts + cases == 0) {
    std::fprintf(env.out, "check database: %s (new run)\n", path.c_str());
    return path;
  }
  if (!reuse) {
    std::fprintf(env.err,
                 "harness check: %s already holds an earlier run (%lld attempt(s), %lld case(s)); its cases "
                 "would be judged again without running anything new. Give a new DB path (or none: a new DB "
                 "per invocation), or --reuse to resume that run and judge its cases\n",
                 path.c_str(), static_cast<long long>(attempts), static_cast<long long>(cases));
    return std::nullopt;
  }
  std::fprintf(env.out, "reusing %s: %lld attempt(s) and %lld case(s) from earlier runs are judged too (--reuse)\n",
               path.c_str(), static_cast<long long>(attempts), static_cast<long long>(cases));
  return path;
}

}  // namespace harness::campaign
