// Restart settling (harness/agent/cases/restart_settling.hpp) over case directories the test
// leaves as an agent killed mid-case would, with a live process group standing for the old
// executor.
#include "harness/agent/cases/restart_settling.hpp"
#include "tests/common/slurp.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/unit/agent/test_bundle.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace {
using namespace harness::agent;
using nlohmann::json;
namespace fs = std::filesystem;

/// A case directory as an agent leaves it once the executor started (spec.json, out/).
fs::path started_case(Registry& reg, const std::string& id) {
  const fs::path d = reg.case_dir(id);
  fs::create_directories(d / "out");
  { std::ofstream(d / "spec.json") << "{}"; }
  return d;
}

json status_file(const fs::path& d) { return json::parse(test_support::slurp(d / "status.json")); }

/// A state directory of its own, its registry, unclean mark and old executors, as a
/// restarted agent has them before it settles.
class RestartSettling : public ::testing::Test {
 protected:
  test_support::TempDir tmp{"settle"};
  Registry reg{tmp.path()};
  UncleanMark mark{tmp.path()};
  OldExecutors old;
};

TEST_F(RestartSettling, ABundleLeftBehindIsReadAndItsUncleanVerdictMarksTheVm) {
  const fs::path d = started_case(reg, "c-u");
  agent_test::write_bundle((d / "out" / "c-u.db").string(), "c-u", "completed", false, {"swap still on"});
  EXPECT_EQ(settle_unfinished_cases(reg, mark, old), std::vector<std::string>{"c-u"});
  const json s = status_file(d);
  EXPECT_EQ(s["state"], "completed");
  EXPECT_EQ(s["restoration"]["clean"], false);
  EXPECT_NE(s["error"].get<std::string>().find("settled when the agent restarted"), std::string::npos) << s;
  EXPECT_EQ(mark.read()["case_id"], "c-u");
  EXPECT_EQ(mark.read()["problems"], json::array({"swap still on"}));
  EXPECT_TRUE(reg.busy.idle());
}

TEST_F(RestartSettling, NoBundleIsLostAfterThePressurePhaseBeganAndMarksTheVm) {
  const fs::path d = started_case(reg, "c-l");
  { std::ofstream(d / "out" / "phase") << "recovery\n"; }
  const fs::path e = started_case(reg, "c-i");
  { std::ofstream(e / "out" / "phase") << "warmup\n"; }
  settle_unfinished_cases(reg, mark, old);
  EXPECT_EQ(status_file(d)["state"], "lost");
  EXPECT_EQ(status_file(e)["state"], "infra_failed");
  EXPECT_TRUE(mark.read().is_object());
  EXPECT_TRUE(status_file(d)["restoration"]["clean"].is_null());
}

TEST_F(RestartSettling, ACaseWhoseExecutorNeverStartedIsInfraFailedWithoutAMark) {
  fs::create_directories(reg.case_dir("c-n") / "out");
  settle_unfinished_cases(reg, mark, old);
  EXPECT_EQ(status_file(reg.case_dir("c-n"))["state"], "infra_failed");
  EXPECT_TRUE(mark.read().is_null());
}

TEST_F(RestartSettling, FinishedCasesAndStrayEntriesAreLeftAlone) {
  const fs::path d = started_case(reg, "c-done");
  const std::string final_text = R"({"state":"completed","error":null})";
  { std::ofstream(d / "status.json") << final_text; }
  { std::ofstream(reg.state_dir / "cases" / "a-file") << "x"; }
  EXPECT_TRUE(settle_unfinished_cases(reg, mark, old).empty());
  EXPECT_EQ(test_support::slurp(d / "status.json"), final_text);
  EXPECT_TRUE(mark.read().is_null());
}

TEST_F(RestartSettling, ALiveOldExecutorHoldsTheSlotUntilItsGroupEnds) {
  const fs::path d = started_case(reg, "c-o");
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    for (;;) pause();
  }
  setpgid(pid, pid);
  struct Reap {
    pid_t p;
    ~Reap() {
      ::kill(-p, SIGKILL);
      ::waitpid(p, nullptr, 0);
    }
  } reap{pid};
  write_executor_record(d, record_of(pid));
  settle_unfinished_cases(reg, mark, old);
  EXPECT_EQ(reg.busy.holder, Busy::Holder::OldExecutor);
  EXPECT_EQ(reg.busy.case_id, "c-o");
  EXPECT_EQ(reg.busy.pgid, pid);
  const json s = status_file(d);
  EXPECT_EQ(s["state"], "infra_failed") << s;
  EXPECT_NE(s["error"].get<std::string>().find("process group " + std::to_string(pid) + ", was still running"),
            std::string::npos)
      << s;
  old.refresh(reg);
  EXPECT_EQ(reg.busy.holder, Busy::Holder::OldExecutor) << "still alive";
  ::kill(-pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  old.refresh(reg);
  EXPECT_TRUE(reg.busy.idle());
}

}  // namespace
