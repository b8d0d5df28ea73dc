// The agent's registry (harness/agent/cases/registry.hpp): final states published to status.json,
// cases of an earlier run read back from it, the busy slot freed, waits that end on a change.
#include "harness/agent/cases/registry.hpp"
#include "tests/common/slurp.hpp"
#include "tests/common/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

namespace {
using namespace harness::agent;
using nlohmann::json;
namespace fs = std::filesystem;

std::shared_ptr<CaseRec> running_case(Registry& reg, const std::string& id) {
  auto c = std::make_shared<CaseRec>();
  c->id = id;
  c->dir = reg.case_dir(id);
  c->state = CaseState::Running;
  fs::create_directories(c->dir / "out");
  reg.cases[id] = c;
  reg.busy = Busy{Busy::Holder::Case, id, -1};
  return c;
}

TEST(Registry, PublishedFinalStateIsWrittenAndFreesTheSlot) {
  test_support::TempDir tmp("registry");
  Registry reg(tmp.path());
  auto c = running_case(reg, "c1");
  reg.publish_final(c, CaseState::Completed, "", 0, json{{"clean", true}});
  EXPECT_EQ(c->state, CaseState::Completed);
  EXPECT_TRUE(reg.busy.idle());
  const json file = json::parse(test_support::slurp(c->dir / "status.json"));
  EXPECT_EQ(file["state"], "completed");
  EXPECT_EQ(file["phase"], "done");
  EXPECT_EQ(file["exit_code"], 0);
}

TEST(Registry, ACancelBeforePublishingMakesItCancelled) {
  test_support::TempDir tmp("registry");
  Registry reg(tmp.path());
  auto c = running_case(reg, "c2");
  c->cancel_requested = true;
  reg.publish_final(c, CaseState::Lost, "pressure failed", 1, nullptr);
  EXPECT_EQ(c->state, CaseState::Cancelled);
  EXPECT_EQ(c->error, "cancelled by request (pressure failed)");
  EXPECT_EQ(json::parse(test_support::slurp(c->dir / "status.json"))["state"], "cancelled");
}

TEST(Registry, AnotherHoldersSlotIsNotFreed) {
  test_support::TempDir tmp("registry");
  Registry reg(tmp.path());
  auto c = running_case(reg, "c3");
  reg.busy = Busy{Busy::Holder::Reboot, "", -1};
  reg.publish_final(c, CaseState::Completed, "", 0, nullptr);
  EXPECT_EQ(reg.busy.holder, Busy::Holder::Reboot);
}

TEST(Registry, EarlierRunsCasesAreReadFromStatusJson) {
  test_support::TempDir tmp("registry");
  Registry reg(tmp.path());
  EXPECT_EQ(reg.find_case("nope"), nullptr);
  fs::create_directories(reg.case_dir("old"));
  { std::ofstream(reg.case_dir("old") / "status.json") << R"({"state":"lost","error":"x","exit_code":2})"; }
  auto c = reg.find_case("old");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->state, CaseState::Lost);
  EXPECT_EQ(c->exit_code, 2);
  EXPECT_EQ(reg.find_case("old"), c) << "kept once read";
  fs::create_directories(reg.case_dir("half"));
  { std::ofstream(reg.case_dir("half") / "status.json") << R"({"state":"running"})"; }
  EXPECT_EQ(reg.find_case("half")->state, CaseState::InfraFailed);
  fs::create_directories(reg.case_dir("bad"));
  { std::ofstream(reg.case_dir("bad") / "status.json") << "[]"; }
  EXPECT_EQ(reg.find_case("bad"), nullptr);
}

TEST(Registry, AWaitEndsOnAChangeOrAtOnceWhenTheStateDiffers) {
  test_support::TempDir tmp("registry");
  Registry reg(tmp.path());
  auto c = running_case(reg, "c4");
  EXPECT_EQ(reg.status_when_changed(c, std::chrono::milliseconds(60000), "queued", "setup")["state"], "running");
  std::thread t([&] { reg.publish_final(c, CaseState::Completed, "", 0, nullptr); });
  // Held until the publish (the wait would otherwise last 60 s and the test time out).
  const json j = reg.status_when_changed(c, std::chrono::milliseconds(60000), "running", "setup");
  t.join();
  EXPECT_EQ(j["state"], "completed");
}

}  // namespace
