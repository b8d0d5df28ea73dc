// One matched block of six arms on a real guest (tests/vm/campaign/policies.yaml): the study's
// three beside senpai, bounded-loop and the study's bounded-reclaim composed as rules. Each arm is held to what it says it does,
// from the guest's own readings (telemetry and controller events in the campaign DB):
//   senpai: several memory.reclaim writes, each the formula over its interval's inputs and within
//     its cap, decisions one interval apart, none while bg PSI some is at or above its target;
//   bounded-loop: the study's trigger fired; each write <= step, none after PSI stopped rising,
//     the total within its cap, each write in a window where bg PSI some rose;
//   rules-reclaim (rules: at the study's trigger, reclaim 96 MiB once): the trigger fired, its
//     rule acted once, one 96 MiB write, as the built-in bounded-reclaim;
//   the study's arms as before (one 96 MiB write for bounded-reclaim, none for static-zram).
// Then `harness analyze`: six arms, the declared family of four comparisons, agreeing with the
// independent reference on the same DB.
#include "results/db.hpp"
#include "tests/common/analysis_vs_reference.hpp"
#include "tests/common/campaign_vm.hpp"
#include "tests/common/db_query.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

using test_support::db_count;

namespace {

struct Decision {
  std::int64_t t_ns = 0;
  std::optional<std::int64_t> delta_us;
  nlohmann::json d;
};

std::string case_of(results::Db& db, const std::string& arm) {
  results::Stmt q(db, "SELECT case_id FROM cases WHERE configuration = ?1 AND status = 'completed'");
  q.bind(1, arm);
  return q.step() ? q.text(0) : "";
}

std::vector<Decision> decisions(results::Db& db, const std::string& id) {
  results::Stmt q(db,
                  "SELECT t_ns, delta_us, detail_json FROM controller_events WHERE case_id = ?1 AND kind = "
                  "'policy_decision' ORDER BY t_ns");
  q.bind(1, id);
  std::vector<Decision> out;
  while (q.step())
    out.push_back({q.int64(0), q.is_null(1) ? std::nullopt : std::optional(q.int64(1)), nlohmann::json::parse(q.text(2))});
  return out;
}

/// bg `some` total (us) of the case's telemetry sample at tick `t_ns`.
std::optional<std::int64_t> some_at(results::Db& db, const std::string& id, std::int64_t t_ns) {
  results::Stmt q(db, "SELECT bg_some_us FROM telemetry WHERE case_id = ?1 AND t_ns = ?2");
  q.bind(1, id);
  q.bind(2, t_ns);
  if (!q.step() || q.is_null(0)) return std::nullopt;
  return q.int64(0);
}

std::vector<std::int64_t> requested(results::Db& db, const std::string& id) {
  results::Stmt q(db, "SELECT requested_bytes FROM reclaim_actions WHERE case_id = ?1 ORDER BY start_ns");
  q.bind(1, id);
  std::vector<std::int64_t> out;
  while (q.step()) out.push_back(q.int64(0));
  return out;
}

constexpr std::int64_t kMiB = 1 << 20;

}  // namespace

TEST(PoliciesBlock, SixArmsDoWhatTheySayOnARealGuest) {
  const test_support::CampaignVm vm("policies");
  const std::string db_path = vm.dir + "/policies.db";
  int rc = vm.harness("vm image").code;
  if (rc == 0)
    rc = vm.run_then_down("run " + std::string(HARNESS_SOURCE_DIR) + "/tests/vm/campaign/policies.yaml " + db_path + " --plain")
             .code;
  ASSERT_EQ(rc, 0) << "see " << vm.log;
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  EXPECT_EQ(db_count(db, "SELECT count(*) FROM schedule WHERE state = 'completed'"), 6);
  EXPECT_EQ(db_count(db, "SELECT count(DISTINCT configuration) FROM cases WHERE status = 'completed'"), 6);
  // The plan's arms, with their policies and hashes, in the results DB.
  EXPECT_EQ(db_count(db, "SELECT count(*) FROM arms"), 6);
  EXPECT_EQ(db_count(db, "SELECT count(*) FROM arms WHERE length(sha256) = 64"), 6);
  EXPECT_EQ(db_count(db, "SELECT count(*) FROM arms WHERE name = 'senpai' AND policy = 'senpai' AND "
                         "json_extract(params_json, '$.interval_s') = 3"),
            1);

  // senpai: the formula over each interval's own readings, within its cap, one interval apart.
  {
    const std::string id = case_of(db, "senpai");
    ASSERT_FALSE(id.empty());
    SCOPED_TRACE(id);
    const auto ds = decisions(db, id);
    ASSERT_GE(ds.size(), 5u) << "a 36 s pressure+recovery at a 3 s interval";
    int writes = 0, above_target = 0;
    std::vector<std::int64_t> asked;
    for (std::size_t i = 0; i < ds.size(); ++i) {
      const auto& d = ds[i].d;
      if (i > 0) {
        EXPECT_GE(ds[i].t_ns - ds[i - 1].t_ns, 3'000'000'000LL - 1'000'000) << "decisions one interval apart";
      }
      if (!d.contains("psi_some_pct")) continue;  // inputs missing: a skip, said so
      // The inputs are the guest's telemetry: the some total grew by psi_some_delta_us between the
      // interval's first tick and this one.
      const auto now = some_at(db, id, ds[i].t_ns), then = some_at(db, id, d["interval_start_t_ns"].get<std::int64_t>());
      ASSERT_TRUE(now && then);
      EXPECT_EQ(d["psi_some_delta_us"].get<std::int64_t>(), *now - *then);
      const double current = d["memory_current_bytes"].get<double>(), psi = d["psi_some_pct"].get<double>();
      const double formula = current * 0.0005 * std::max(0.0, 1.0 - psi / 0.1), cap = current * 0.01;
      EXPECT_NEAR(d["formula_bytes"].get<double>(), formula, 1e-6 * (1 + formula));
      EXPECT_LE(d["requested_bytes"].get<std::int64_t>(), static_cast<std::int64_t>(cap));
      if (psi >= 0.1) {
        ++above_target;
        EXPECT_EQ(d["requested_bytes"], 0) << "no reclaim at or above the PSI target: " << d.dump();
      }
      if (d["action"] == "write") {
        ++writes;
        EXPECT_EQ(d["requested_bytes"].get<std::int64_t>(), static_cast<std::int64_t>(std::floor(std::min(formula, cap))));
        asked.push_back(d["requested_bytes"].get<std::int64_t>());
      }
    }
    EXPECT_GE(writes, 2) << "senpai wrote while bg was not stalled (before the limit)";
    EXPECT_GE(above_target, 1) << "bg stalled above the target once the limit was crossed";
    EXPECT_EQ(requested(db, id), asked) << "each write is a reclaim_actions row";
  }

  // bounded-loop: after the study's trigger, steps while bg PSI some rises, within its caps.
  {
    const std::string id = case_of(db, "bounded-loop");
    ASSERT_FALSE(id.empty());
    SCOPED_TRACE(id);
    EXPECT_EQ(db_count(db, "SELECT count(*) FROM controller_events WHERE kind = 'trigger' AND case_id = '" + id + "'"), 1);
    const auto ds = decisions(db, id);
    ASSERT_FALSE(ds.empty());
    bool stopped = false;
    std::int64_t total = 0;
    std::vector<std::int64_t> asked;
    for (const auto& x : ds) {
      if (x.d["action"] == "stop") stopped = true;
      if (x.d["action"] != "write") continue;
      EXPECT_FALSE(stopped) << "a write after PSI stopped rising: " << x.d.dump();
      const auto bytes = x.d["requested_bytes"].get<std::int64_t>();
      EXPECT_LE(bytes, 16 * kMiB);
      ASSERT_TRUE(x.delta_us);
      EXPECT_GE(*x.delta_us, 1000) << "a write in a window where bg PSI some did not rise";
      total += bytes;
      asked.push_back(bytes);
    }
    EXPECT_GE(asked.size(), 1u);
    EXPECT_LE(total, 64 * kMiB);
    EXPECT_EQ(requested(db, id), asked);
  }

  // rules-reclaim: the study's bounded-reclaim composed as a rule.
  {
    const std::string id = case_of(db, "rules-reclaim");
    ASSERT_FALSE(id.empty());
    SCOPED_TRACE(id);
    EXPECT_EQ(db_count(db, "SELECT count(*) FROM controller_events WHERE kind = 'trigger' AND case_id = '" + id + "'"), 1);
    EXPECT_GE(db_count(db, "SELECT count(*) FROM controller_events WHERE kind = 'rule' AND case_id = '" + id + "'"), 1);
    EXPECT_EQ(requested(db, id), (std::vector<std::int64_t>{96 * kMiB}));
    EXPECT_EQ(db_count(db, "SELECT count(*) FROM controller_events e WHERE case_id = '" + id +
                               "' AND kind = 'reclaim_start' AND t_ns >= (SELECT t_ns FROM controller_events WHERE case_id = '" +
                               id + "' AND kind = 'trigger')"),
              1)
        << "the write starts at or after the trigger";
  }

  // The study's arms, unchanged: one 96 MiB write for bounded-reclaim, none for static-zram.
  EXPECT_EQ(requested(db, case_of(db, "bounded-reclaim")), (std::vector<std::int64_t>{96 * kMiB}));
  EXPECT_TRUE(requested(db, case_of(db, "static-zram")).empty());

  // What each arm did, printed for the log (the measured figures).
  {
    results::Stmt q(db,
                    "SELECT c.configuration, (SELECT count(*) FROM reclaim_actions r WHERE r.case_id = c.case_id), "
                    "(SELECT coalesce(sum(requested_bytes), 0) FROM reclaim_actions r WHERE r.case_id = c.case_id), "
                    "(SELECT coalesce(sum(achieved_bytes), 0) FROM reclaim_actions r WHERE r.case_id = c.case_id), "
                    "(SELECT max(bg_some_us) - min(bg_some_us) FROM telemetry t WHERE t.case_id = c.case_id AND "
                    "t.phase = 'pressure') FROM cases c ORDER BY c.configuration");
    while (q.step())
      std::printf("arm %-20s reclaim writes %2lld  requested %8.2f MiB  achieved %8.2f MiB  bg PSI some in pressure %.3f s\n",
                  q.text(0).c_str(), static_cast<long long>(q.int64(1)), q.int64(2) / 1048576.0, q.int64(3) / 1048576.0,
                  q.is_null(4) ? -1.0 : q.int64(4) / 1e6);
  }

  // The analysis: six arms, the declared family of four, and the reference agrees.
  const auto a = test_support::analyse_with_reference(db_path, vm.dir + "/report");
  ASSERT_NO_FATAL_FAILURE(test_support::expect_agreement(a, 1, 0.0));
  const auto t4 = test_support::report_rows(a.report, "table4_primary");
  ASSERT_EQ(t4.size(), 4u);
  EXPECT_EQ(t4[2]["comparison"], "compute: senpai / static");
  EXPECT_EQ(t4[3]["comparison"], "compute: bounded-loop / static");
  EXPECT_EQ(test_support::report_rows(a.report, "outcome_counts").size(), 6u);
  EXPECT_THAT(a.report_md, ::testing::HasSubstr("declared family of 4 comparisons"));
  for (const auto& row : t4)
    std::printf("%-36s ratio %.3f  (one block: a zero-width interval)\n", row["comparison"].get<std::string>().c_str(),
                row["ratio"].get<double>());
  if (!HasFailure()) std::filesystem::remove_all(vm.dir);
}
