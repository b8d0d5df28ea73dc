// Outcomes the protocol cares about, provoked in a real guest rather than a fake agent
// (docs/PROTOCOL.md "Case status", "Every case keeps its outcome"). One local guest with a
// 16 MiB swapfile, listed by hand as a host and reused for the three cases of one matched
// triplet (tests/vm/campaign/outcomes.yaml), then the DB analysed:
//   - an OOM kill as an outcome: the first two cases' pressure-gen is OOM-killed in bg by the
//     kernel; each case completes, its outcome_json and memory.events telemetry count the kill
//     in bg and none in fg, and the report's outcome table counts them the same way;
//   - a guest lost after the pressure phase started: the test kills the guest's qemu (SIGKILL)
//     once the runner has seen the third case in its pressure phase; the case is `lost`, its
//     one attempt says so and is never rerun, the run still exits 0 (an outcome, not an infra
//     failure), and the analysis imputes its p99 (worst observed) and counts it;
//   - the triplet stays: Table 4 is computed over it, and the independent reference agrees.
#include "harness/vm/fleet.hpp"
#include "results/db.hpp"
#include "tests/common/db_query.hpp"
#include "tests/common/analysis_vs_reference.hpp"
#include "tests/common/campaign_vm.hpp"
#include "tests/common/listed_guest.hpp"
#include "tests/common/wait_until.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

using ::testing::HasSubstr;

namespace {

using test_support::db_count;
using test_support::db_text;

const std::string kCampaign = std::string(HARNESS_SOURCE_DIR) + "/tests/vm/campaign/outcomes.yaml";

class OutcomesVm : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    vm_ = std::make_unique<test_support::CampaignVm>("outcomes");
    db_ = vm_->dir + "/outcomes.db";
    setup_error_ = run();
    vm_->harness("vm down vm0");  // the killed guest's state, whatever happened
    if (setup_error_.empty()) analysis_ = test_support::analyse_with_reference(db_, vm_->dir + "/report");
  }
  static void TearDownTestSuite() {
    if (!::testing::UnitTest::GetInstance()->Failed()) std::filesystem::remove_all(vm_->dir);
    vm_.reset();  // here, not at exit: its cache goes too when every test passed
  }
  // A campaign that never ran fails every test of the suite (tests/README.md: never a skip).
  void SetUp() override { ASSERT_TRUE(setup_error_.empty()) << setup_error_ << "\nsee " << vm_->log; }

  /// Boots the guest, runs the campaign in the background, kills the guest in the third case's
  /// pressure phase; "" when all of that happened.
  static std::string run() {
    const auto& vm = *vm_;
    // local: the engine can tell that the killed guest is gone.
    const auto listed = test_support::boot_listed_guest(vm, "--swapfile-mib 16", "    local: true\n");
    if (!listed.error.empty()) return listed.error;
    const std::string& hosts = listed.hosts_file;
    const pid_t runner = vm.spawn_harness({"run", kCampaign, db_, "--hosts", hosts, "--plain"});
    const std::string third = "(SELECT case_id FROM schedule WHERE ordinal = 2)";
    const bool in_pressure = test_support::wait_until(
        [&] {
          if (!std::filesystem::exists(db_)) return false;
          try {
            results::Db db(db_, results::Db::Mode::ReadOnly);
            return db_count(db, "SELECT count(*) FROM attempts WHERE case_id = " + third +
                                 " AND status = 'running' AND json_extract(detail_json, '$.phase') = 'pressure'") >= 1;
          } catch (const results::DbError&) {
            return false;
          }
        },
        std::chrono::minutes(8), std::chrono::milliseconds(200));
    if (!in_pressure) {
      kill(runner, SIGKILL);
      waitpid(runner, nullptr, 0);
      return "the third case never reached its pressure phase within 8 min";
    }
    killed_pid_ = listed.guest.pid;
    if (kill(killed_pid_, SIGKILL) != 0) return "kill of qemu pid " + std::to_string(killed_pid_) + " failed";
    std::printf("killed qemu pid %d in the third case's pressure phase\n", killed_pid_);
    std::fflush(stdout);
    // The agent goes silent in pressure; the engine's liveness says the guest is gone at the
    // runner's next unanswered poll (docs/PROTOCOL.md "A silent agent"): 4 min is generous.
    int st = 0;
    const bool ended = test_support::wait_until([&] { return waitpid(runner, &st, WNOHANG) == runner; },
                                                std::chrono::minutes(4), std::chrono::milliseconds(200));
    if (!ended) {
      kill(runner, SIGKILL);
      waitpid(runner, nullptr, 0);
      return "the runner did not finish within 4 min of the guest's death";
    }
    runner_rc_ = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return "";
  }

  static inline std::unique_ptr<test_support::CampaignVm> vm_;
  static inline std::string db_, setup_error_;
  static inline int runner_rc_ = -1;
  static inline pid_t killed_pid_ = -1;
  static inline test_support::AnalysisPair analysis_;
};

}  // namespace

TEST_F(OutcomesVm, OomKillInBgIsAnOutcomeCountedWhereItHappened) {
  results::Db db(db_, results::Db::Mode::ReadOnly);
  results::Stmt q(db, "SELECT c.case_id, c.status, c.outcome_json FROM cases c JOIN schedule s USING (case_id) "
                      "WHERE s.ordinal < 2 ORDER BY s.ordinal");
  int n = 0;
  while (q.step()) {
    ++n;
    const std::string id = q.text(0);
    SCOPED_TRACE(id);
    EXPECT_EQ(q.text(1), "completed");
    const auto o = nlohmann::json::parse(q.text(2));
    ASSERT_TRUE(o["oom_kills"]["bg"].is_number()) << o.dump();
    EXPECT_GE(o["oom_kills"]["bg"].get<int>(), 1) << "pressure-gen was not OOM-killed in bg: " << o["oom_kills"].dump();
    EXPECT_EQ(o["oom_kills"]["fg"], 0) << "a canary was OOM-killed: " << o["oom_kills"].dump();
    EXPECT_GE(o["oom_events"]["bg"].get<int>(), 1) << o.dump();
    // The telemetry read memory.events itself: bg oom_kill grew, fg's stayed.
    EXPECT_GE(db_count(db, "SELECT max(bg_oom_kill) - min(bg_oom_kill) FROM telemetry WHERE case_id = '" + id + "'"), 1);
    EXPECT_EQ(db_count(db, "SELECT max(fg_oom_kill) - min(fg_oom_kill) FROM telemetry WHERE case_id = '" + id + "'"), 0);
    EXPECT_EQ(db_count(db, "SELECT count(*) FROM attempts WHERE case_id = '" + id + "'"), 1) << "an OOM case was rerun";
  }
  EXPECT_EQ(n, 2);
  // The report counts them per configuration, in bg.
  const auto rows = test_support::report_rows(analysis_.report, "outcome_counts");
  ASSERT_EQ(rows.size(), 3u) << analysis_.report_md;
  int bg = 0;
  for (const auto& r : rows) {
    if (r["lost_cases"] == 1) continue;  // the lost case has no outcome_json
    ASSERT_TRUE(r["oom_kills_bg"].is_number()) << r.dump();
    EXPECT_GE(r["oom_kills_bg"].get<int>(), 1) << r.dump();
    EXPECT_EQ(r["oom_kills_fg"], 0) << r.dump();
    bg += r["oom_kills_bg"].get<int>();
  }
  EXPECT_EQ(bg, db_count(db, "SELECT sum(json_extract(outcome_json, '$.oom_kills.bg')) FROM cases WHERE status = 'completed'"));
}

TEST_F(OutcomesVm, GuestKilledInPressureIsLostNeverRerunImputedAndCounted) {
  EXPECT_EQ(runner_rc_, 0) << "a lost case is an outcome: the run finishes; see " << vm_->log;
  results::Db db(db_, results::Db::Mode::ReadOnly);
  const std::string id = db_text(db, "SELECT case_id FROM schedule WHERE ordinal = 2");
  const std::string conf = db_text(db, "SELECT configuration FROM schedule WHERE ordinal = 2");
  EXPECT_EQ(db_text(db, "SELECT state FROM schedule WHERE case_id = '" + id + "'"), "lost");
  EXPECT_EQ(db_text(db, "SELECT status FROM cases WHERE case_id = '" + id + "'"), "lost");
  EXPECT_EQ(db_count(db, "SELECT count(*) FROM attempts WHERE case_id = '" + id + "'"), 1) << "the lost case was rerun";
  EXPECT_EQ(db_text(db, "SELECT status FROM attempts WHERE case_id = '" + id + "'"), "lost");
  EXPECT_EQ(db_text(db, "SELECT json_extract(detail_json, '$.phase') FROM attempts WHERE case_id = '" + id + "'"), "pressure");
  // Lost on evidence (docs/PROTOCOL.md "A silent agent"): the engine saw the guest's qemu gone.
  EXPECT_THAT(db_text(db, "SELECT error FROM attempts WHERE case_id = '" + id + "'"),
              HasSubstr("the engine says the guest is gone (liveness)"));
  EXPECT_EQ(db_count(db, "SELECT count(*) FROM canary_requests WHERE case_id = '" + id + "'"), 0) << "a lost case has no trace";
  EXPECT_THAT(test_support::slurp(vm_->log), HasSubstr("1 lost"));
  // The analysis: counted and imputed in its configuration's row.
  bool seen = false;
  for (const auto& r : test_support::report_rows(analysis_.report, "outcome_counts")) {
    SCOPED_TRACE(r.dump());
    const bool mine = r["configuration"] == conf;
    seen = seen || mine;
    EXPECT_EQ(r["lost_cases"], mine ? 1 : 0);
    EXPECT_EQ(r["imputed_p99_values"], mine ? 2 : 0);
    EXPECT_EQ(r["cases"], 1);
  }
  EXPECT_TRUE(seen) << conf;
  EXPECT_EQ(analysis_.report["extra"]["lost_cases"], 1) << analysis_.report["extra"].dump();
  EXPECT_THAT(analysis_.report_md, HasSubstr("1 lost case(s) (lost after the pressure phase started): kept in their "
                                             "triplets with the worst observed p99 per canary imputed"));
}

TEST_F(OutcomesVm, TheTripletStaysAndTheReferenceAgrees) {
  ASSERT_NO_FATAL_FAILURE(test_support::expect_agreement(analysis_, 1, 0.0));
  for (const auto& r : test_support::report_rows(analysis_.report, "table4_primary")) {
    EXPECT_EQ(r["triplets"], 1) << r.dump();
    EXPECT_GT(r["ratio"].get<double>(), 0.0) << r.dump();
  }
  EXPECT_THAT(analysis_.report_md, HasSubstr("NOT ASSESSABLE"));
}
