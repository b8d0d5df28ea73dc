// `harness check --until-decided --max-pairs N` end to end: the real binary against a fake
// agent on 127.0.0.1 (tests/common/fake_agent.hpp) whose bundles set the candidate's reclaim
// duration. Design: 1 VM x 1 regime x bounded-reclaim, design.repeats 2, --max-pairs 6: looks
// after 2, 4 and 6 pairs. A 1.5x candidate regresses at the first look: the check stops there
// (exit 1, 4 attempts, the later pairs pending). A candidate whose ratio wanders around
// max_ratio 1.0 is never decided: every look runs (12 attempts, into the same DB) and the check
// exits 5 (inconclusive); --reuse of that DB plans the same and runs nothing new.
#include <gmock/gmock.h>
#include <gtest/gtest.h>


#include <cstdlib>
#include <filesystem>

#include "tests/common/db_query.hpp"
#include "tests/common/fake_agent.hpp"
#include "../campaign/test_files.hpp"
#include "results/db.hpp"
#include "tests/common/run_harness.hpp"

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testfiles::TempDir;

namespace {

std::string campaign_yaml(const std::string& max_ratio) {
  return "name: ci-seq\nkind: ci\nseed: 5\npinned_commit: any\nvm: {vcpus: 1, memory_mib: 1024}\n"
         "provider: {kind: hosts, vms: [vm0]}\n"
         "phases_s: {warmup: 1, pressure: 1, recovery: 1}\n"
         "cgroups: {bg_memory_max_mib: 300}\n"
         "backend:\n  zram: {disksize_mib: 512, algorithm: lzo-rle, priority: 100}\n"
         "  swapfile: {path: /var/lib/harness/swapfile, priority: 10}\n"
         "pressure: {allocation_mib: 600, active_set_mib: 128}\n"
         "regimes:\n  - {name: fast-random, rate_mib_s: 64, contents: random}\n"
         "canaries: {}\ntrigger: {}\n"
         "configurations: [bounded-reclaim]\n"
         "design: {kind: ab-pairs, repeats: 2, dose_mib: 96, aa: true}\n"
         "variants: {baseline: {}, candidate: {}}\n"
         "regression: {alpha: 0.05, tolerances: {reclaim_duration: {max_ratio: " +
         max_ratio + "}}}\n"
         "runner: {max_infra_retries: 1, poll_interval_ms: 20}\n"
         "assertions:\n  - kind: all_cases_completed\n";
}

/// `harness check ARGS --plain` run in the temp dir's work folder, output captured in its check.log.
test_support::HarnessRun check(const TempDir& d, const std::string& args) {
  return test_support::run_harness("check " + args + " --plain", d / "check.log", test_support::LogMode::Replace, "",
                                   d / "work");
}

std::int64_t count(const std::string& db_path, const std::string& sql) {
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  return test_support::db_count(db, sql);
}

/// A fake agent whose bundles give the candidate's reclaim write `ratio(repeat)` times the
/// baseline's 0.5 s.
struct Fixture {
  TempDir d;
  fake::FakeAgent agent{d / "agent0", "tok"};
  Fixture(const std::string& max_ratio, std::function<double(int)> ratio) {
    fs::create_directories(d / "work");
    testfiles::write_token(d / "token", "tok");
    testfiles::write(d / "hosts.yaml", "hosts:\n  - name: vm0\n    url: " + agent.url() + "\n    token_file: " +
                                           (d / "token") + "\n    accelerator: real\n    local: false\n");
    testfiles::write(d / "ci.yaml", campaign_yaml(max_ratio));
    agent.bundle_writer = [ratio](const std::string& path, const nlohmann::json& spec, fake::Outcome o) {
      fake::write_bundle(path, spec, o);
      if (spec.at("variant").at("name") != "candidate") return;
      results::Db db(path, results::Db::Mode::ReadWrite);
      results::Stmt u(db, "UPDATE reclaim_actions SET duration_ns = ?1");
      u.bind(1, static_cast<std::int64_t>(500'000'000.0 * ratio(spec.at("repeat").get<int>())));
      u.run();
    };
  }
  std::string args() const { return (d / "ci.yaml") + " --hosts " + (d / "hosts.yaml"); }
};

}  // namespace

TEST(CheckSequential, ARegressionAtTheFirstLookStopsThere) {
  Fixture f("1.2", [](int repeat) { return 1.5 + 0.01 * repeat; });
  const std::string db = f.d / "work/seq.db";
  const auto r = check(f.d, f.args() + " " + db + " --until-decided --max-pairs 6");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("until decided: at most 6 pair(s), judged after 3 look(s) at 2, 4, 6 pairs"));
  EXPECT_THAT(r.out, HasSubstr("look 1 of 3: up to 2 pair(s)"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("look 2 of 3")));
  EXPECT_THAT(r.out, HasSubstr("REGRESSION reclaim_duration"));
  EXPECT_EQ(count(db, "SELECT count(*) FROM attempts"), 4);
  EXPECT_EQ(count(db, "SELECT count(*) FROM schedule"), 12) << "the plan holds every pair up to the cap";
  EXPECT_EQ(f.agent.posts(), 4);
}

TEST(CheckSequential, DecidedAtTheFirstLookPassesAndThePairsNeverRunAreNotCountedAsPending) {
  // The candidate always at 0.6 of the baseline, max_ratio 1.0: decided ok at look 1. The pairs
  // of looks 2 and 3 stay pending on purpose; all_cases_completed judges the look's cases only
  // (it failed the check on them before).
  Fixture f("1.0", [](int) { return 0.6; });
  const std::string db = f.d / "work/seq.db";
  const auto r = check(f.d, f.args() + " " + db + " --until-decided --max-pairs 6");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("look 2 of 3")));
  EXPECT_THAT(r.out, HasSubstr("PASS  all_cases_completed  (4 case(s))")) << r.out;
  EXPECT_EQ(count(db, "SELECT count(*) FROM attempts"), 4);
  EXPECT_EQ(count(db, "SELECT count(*) FROM schedule WHERE state = 'pending'"), 8);
  // Judged again later (--judge runs nothing): the DB reached look 1, its later pairs are not judged.
  const auto judged = check(f.d, f.args() + " --judge " + db + " --until-decided --max-pairs 6");
  EXPECT_EQ(judged.code, 0) << judged.out;
  EXPECT_THAT(judged.out, HasSubstr("the DB reached look 1 of 3 (2 pair(s)); the later looks' pairs were not run and are not judged"));
  EXPECT_THAT(judged.out, HasSubstr("PASS  all_cases_completed  (4 case(s))")) << judged.out;
  EXPECT_EQ(count(db, "SELECT count(*) FROM attempts"), 4);
}

TEST(CheckSequential, UndecidedRunsEveryLookIntoTheSameDbAndExitsFive) {
  // Ratios 0.9 .. 1.1 around max_ratio 1.0: the interval straddles it at every look.
  Fixture f("1.0", [](int repeat) { return repeat % 2 ? 0.9 : 1.1; });
  const std::string db = f.d / "work/seq.db";
  const auto r = check(f.d, f.args() + " " + db + " --until-decided --max-pairs 6");
  EXPECT_EQ(r.code, 5) << r.out;
  EXPECT_THAT(r.out, HasSubstr("look 1: not decided yet; adding pairs"));
  EXPECT_THAT(r.out, HasSubstr("look 3 of 3: up to 6 pair(s)"));
  EXPECT_THAT(r.out, HasSubstr("INCONCLUSIVE reclaim_duration"));
  EXPECT_THAT(r.out, HasSubstr("the cap of 6 pair(s) is reached"));
  EXPECT_EQ(count(db, "SELECT count(*) FROM attempts"), 12);
  EXPECT_EQ(count(db, "SELECT count(*) FROM cases WHERE status = 'completed'"), 12);
  // Judged as stored: every look's pairs ran, so none is left out.
  const auto judged = check(f.d, f.args() + " --judge " + db + " --until-decided --max-pairs 6");
  EXPECT_EQ(judged.code, 5) << judged.out;
  EXPECT_THAT(judged.out, HasSubstr("the DB reached look 3 of 3 (6 pair(s))\n")) << judged.out;
  // Its Markdown names the method the looks used, not the plain check's bootstrap.
  const std::string md = test_support::slurp(db.substr(0, db.size() - 3) + "-check.md");
  EXPECT_THAT(md, HasSubstr("delta-method Student-t intervals of the ratio at 98.3333% each")) << md;
  EXPECT_THAT(md, HasSubstr("the 3 look(s) of `--until-decided`")) << md;
  EXPECT_THAT(md, ::testing::Not(HasSubstr("bootstrap percentile"))) << md;
  // Resumed: the same plan (its sequential design is stored), nothing new to run.
  const auto again = check(f.d, f.args() + " " + db + " --until-decided --max-pairs 6 --reuse");
  EXPECT_EQ(again.code, 5) << again.out;
  EXPECT_EQ(count(db, "SELECT count(*) FROM attempts"), 12);
  // `harness run DB` re-plans from the stored YAML and the stored sequential design: accepted.
  const auto run = test_support::run_harness("run " + db + " --hosts " + (f.d / "hosts.yaml") + " --plain",
                                             f.d / "run.log", test_support::LogMode::Replace, "", f.d / "work");
  EXPECT_EQ(run.code, 0) << run.out;
}
