// The case state machine's types (harness/agent/cases/case_state.hpp): state names, final states,
// the bundle's status, the typed busy slot, the phase and the status answer.
#include "harness/agent/cases/case_state.hpp"
#include "tests/common/temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace {
using namespace harness::agent;
namespace fs = std::filesystem;

TEST(CaseState, EveryStateHasItsWireNameAndBack) {
  const std::vector<std::pair<CaseState, std::string>> all{
      {CaseState::Queued, "queued"},       {CaseState::Qualifying, "qualifying"}, {CaseState::Running, "running"},
      {CaseState::Finishing, "finishing"}, {CaseState::Completed, "completed"},   {CaseState::Lost, "lost"},
      {CaseState::InfraFailed, "infra_failed"}, {CaseState::Cancelled, "cancelled"}};
  for (const auto& [state, name] : all) {
    EXPECT_EQ(state_name(state), name);
    EXPECT_EQ(parse_state(name), state) << name;
  }
  EXPECT_FALSE(parse_state("Completed"));
  EXPECT_FALSE(parse_state(""));
  EXPECT_FALSE(parse_state("done"));
}

TEST(CaseState, FourStatesAreFinal) {
  EXPECT_FALSE(is_final(CaseState::Queued));
  EXPECT_FALSE(is_final(CaseState::Qualifying));
  EXPECT_FALSE(is_final(CaseState::Running));
  EXPECT_FALSE(is_final(CaseState::Finishing));
  EXPECT_TRUE(is_final(CaseState::Completed));
  EXPECT_TRUE(is_final(CaseState::Lost));
  EXPECT_TRUE(is_final(CaseState::InfraFailed));
  EXPECT_TRUE(is_final(CaseState::Cancelled));
}

TEST(CaseState, BundleStatusOtherThanCompletedOrLostIsInfraFailed) {
  EXPECT_EQ(state_of_bundle_status("completed"), CaseState::Completed);
  EXPECT_EQ(state_of_bundle_status("lost"), CaseState::Lost);
  EXPECT_EQ(state_of_bundle_status("infra_failed"), CaseState::InfraFailed);
  EXPECT_EQ(state_of_bundle_status("cancelled"), CaseState::InfraFailed);
  EXPECT_EQ(state_of_bundle_status("running"), CaseState::InfraFailed);
}

TEST(Busy, SaysWhatHoldsTheVm) {
  EXPECT_TRUE(Busy{}.idle());
  EXPECT_EQ(Busy{}.message(), "");
  const Busy c{Busy::Holder::Case, "case-1", -1};
  EXPECT_FALSE(c.idle());
  EXPECT_TRUE(c.is_case("case-1"));
  EXPECT_FALSE(c.is_case("case-2"));
  EXPECT_EQ(c.message(), "busy: case case-1 is running");
  EXPECT_EQ(c.holder_id(), "case-1");
  const Busy q{Busy::Holder::Qualification, "", -1};
  EXPECT_EQ(q.message(), "busy: a qualification is running");
  EXPECT_EQ(q.holder_id(), "(qualification)");
  EXPECT_FALSE(q.is_case(""));
  const Busy r{Busy::Holder::Reboot, "", -1};
  EXPECT_EQ(r.message(), "busy: the VM is about to reboot");
  EXPECT_EQ(r.holder_id(), "(reboot)");
  const Busy o{Busy::Holder::OldExecutor, "case-0", 4242};
  EXPECT_NE(o.message().find("executor of case case-0 from an earlier agent run (process group 4242)"), std::string::npos)
      << o.message();
  EXPECT_EQ(o.holder_id(), "case-0");
  EXPECT_FALSE(o.is_case("case-0")) << "an old executor's case is settled: it is not the running case";
}

TEST(CaseState, PhaseComesFromTheExecutorsFileOnlyWhileRunning) {
  test_support::TempDir tmp("case-state");
  CaseRec c;
  c.id = "c1";
  c.dir = tmp.path();
  fs::create_directories(c.dir / "out");
  { std::ofstream(c.dir / "out" / "phase") << "pressure\n"; }
  c.state = CaseState::Qualifying;
  EXPECT_EQ(phase_of(c), "setup");
  c.state = CaseState::Running;
  EXPECT_EQ(phase_of(c), "pressure");
  c.state = CaseState::Finishing;
  EXPECT_EQ(phase_of(c), "done");
  c.state = CaseState::Running;
  { std::ofstream(c.dir / "out" / "phase") << "lunch\n"; }
  EXPECT_EQ(phase_of(c), "setup") << "an unknown word reads setup";
  fs::remove(c.dir / "out" / "phase");
  EXPECT_EQ(phase_of(c), "setup");
  EXPECT_EQ(bundle_path(c), c.dir / "out" / "c1.db");
}

TEST(CaseState, StatusAnswerHasTheApiFields) {
  CaseRec c;
  c.id = "c2";
  c.state = CaseState::InfraFailed;
  nlohmann::json j = status_json(c, "done");
  EXPECT_EQ(j["case_id"], "c2");
  EXPECT_EQ(j["state"], "infra_failed");
  EXPECT_EQ(j["phase"], "done");
  EXPECT_TRUE(j["error"].is_null());
  EXPECT_TRUE(j["exit_code"].is_null());
  EXPECT_EQ(j["cancel_requested"], false);
  EXPECT_TRUE(j["restoration"].is_null());
  c.error = "boom";
  c.exit_code = 3;
  c.cancel_requested = true;
  j = status_json(c, "done");
  EXPECT_EQ(j["error"], "boom");
  EXPECT_EQ(j["exit_code"], 3);
  EXPECT_EQ(j["cancel_requested"], true);
}

}  // namespace
