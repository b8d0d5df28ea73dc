// The executor classifies its own failures by phase exactly as the runner classifies a
// vanished case (docs/PROTOCOL.md): before the phase file reported `pressure` a failure is
// infra_failed (rerun), from then on it is lost (an outcome, never rerun; study: reruns
// "only after an infrastructure failure"). Whole cases over the scratch host
// (case_scratch.hpp runnable_host), one per failure path the executor detects itself;
// outcome_json stays as outcome_compat_test holds it, only cases.status differs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tests/common/slurp.hpp"
#include "tests/unit/case/case_scratch.hpp"

using namespace case_test;

namespace {

/// cases.status and cases.error of the bundle at `path`.
std::pair<std::string, std::string> bundle_status(const std::string& path) {
  results::Db db(path, results::Db::Mode::ReadOnly);
  results::Stmt c(db, "SELECT status, coalesce(error, '') FROM cases");
  if (!c.step()) return {"(no row)", ""};
  return {c.text(0), c.text(1)};
}

/// The bundle's phases rows, in order.
std::vector<std::string> bundle_phases(const std::string& path) {
  results::Db db(path, results::Db::Mode::ReadOnly);
  results::Stmt ph(db, "SELECT phase FROM phases ORDER BY start_ns");
  std::vector<std::string> out;
  while (ph.step()) out.push_back(ph.text(0));
  return out;
}

/// What the agent would read from <out>/phase last ("(none)" when never written).
std::string phase_file(const harness::case_::ExecutorOptions& o) {
  const auto p = std::filesystem::path(o.out_dir) / "phase";
  if (!std::filesystem::exists(p)) return "(none)";
  auto s = test_support::slurp(p.string());
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

/// Replaces workload stand-in `name` of `t` with a shell script `body`.
void stand_in(const Scratch& t, const std::string& name, const std::string& body) {
  const auto bin = t.dir() / "bin" / name;
  std::ofstream(bin) << "#!/bin/sh\n" << body;
  std::filesystem::permissions(bin, std::filesystem::perms::owner_all);
}

void expect_lost(const harness::case_::ExecutorResult& r, const harness::case_::ExecutorOptions& o, const std::string& why) {
  EXPECT_EQ(r.status, "lost") << r.error;
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.error.find(why), std::string::npos) << r.error;
  ASSERT_FALSE(r.bundle_path.empty());
  const auto [status, error] = bundle_status(r.bundle_path);
  EXPECT_EQ(status, "lost");
  EXPECT_NE(error.find(why), std::string::npos) << error;
  const auto phases = bundle_phases(r.bundle_path);
  EXPECT_NE(std::find(phases.begin(), phases.end(), "pressure"), phases.end());
  EXPECT_EQ(phase_file(o), "restoration");
  EXPECT_TRUE(bundle_outcome(r.bundle_path).contains("restoration"));  // restoration still ran
}

}  // namespace

TEST(ExecutorFailurePhase, TheRuleIsThePressurePhaseReported) {
  // The executor-error and bundle-write paths end through this rule too.
  EXPECT_EQ(harness::case_::classify(std::nullopt, true).status, "completed");
  EXPECT_EQ(harness::case_::classify(std::nullopt, true).exit_code, 0);
  EXPECT_EQ(harness::case_::classify(std::string("executor error: x"), false).status, "infra_failed");
  EXPECT_EQ(harness::case_::classify(std::string("executor error: x"), false).exit_code, 3);
  EXPECT_EQ(harness::case_::classify(std::string("executor error: x"), true).status, "lost");
  EXPECT_EQ(harness::case_::classify(std::string("executor error: x"), true).exit_code, 4);
  EXPECT_EQ(harness::case_::classify(std::string("writing the bundle failed"), true).error, "writing the bundle failed");
}

TEST(ExecutorFailurePhase, CanariesThatCannotStartAreInfraFailedAndPressureNeverShown) {
  Scratch t;
  FaultScope f;
  f.fail("harness/fg/cgroup.procs", EPERM, FsOp::Write);  // first match wins: before the stubs
  auto h = runnable_host(t, f, "phase-canaries", "static-zram");
  const auto r = harness::case_::run_case(harness::case_::parse_spec(h.spec.dump(), "test"), h.o);
  EXPECT_EQ(r.status, "infra_failed") << r.error;
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.error.find("starting canaries"), std::string::npos) << r.error;
  ASSERT_FALSE(r.bundle_path.empty());
  EXPECT_EQ(bundle_status(r.bundle_path).first, "infra_failed");
  // The runner counts restoration as after pressure: a case that never reached pressure
  // must not show it.
  EXPECT_NE(phase_file(h.o), "restoration");
  EXPECT_NE(phase_file(h.o), "pressure");
}

TEST(ExecutorFailurePhase, PressureGenThatCannotStartIsInfraFailedAndPressureNeverShown) {
  // The phase file says `pressure` only once pressure-gen has started: a pressure-gen that
  // cannot start is an infrastructure failure (rerun), not a lost case with a worst p99.
  Scratch t;
  FaultScope f;
  f.fail("harness/bg/cgroup.procs", EPERM, FsOp::Write);
  auto h = runnable_host(t, f, "phase-pressure-gen", "bounded-reclaim");
  const auto r = harness::case_::run_case(harness::case_::parse_spec(h.spec.dump(), "test"), h.o);
  EXPECT_EQ(r.status, "infra_failed") << r.error;
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.error.find("starting pressure-gen"), std::string::npos) << r.error;
  ASSERT_FALSE(r.bundle_path.empty());
  EXPECT_EQ(bundle_status(r.bundle_path).first, "infra_failed");
  EXPECT_EQ(phase_file(h.o), "warmup");
}

TEST(ExecutorFailurePhase, PressureGenThatCannotExecIsInfraFailedNotLost) {
  // The binary passes the precondition (executable, check_workload_inputs) but execv fails
  // at the pressure tick: its interpreter does not exist (ENOENT from execv). The spawn
  // precedes the phase change, so the case never showed `pressure` and is rerun.
  Scratch t;
  FaultScope f;
  auto h = runnable_host(t, f, "phase-pressure-gen-exec", "static-zram");
  const auto bin = t.dir() / "bin" / "pressure-gen";
  std::ofstream(bin, std::ios::trunc) << "#!/nonexistent/interpreter\n";
  std::filesystem::permissions(bin, std::filesystem::perms::owner_all);
  const auto r = harness::case_::run_case(harness::case_::parse_spec(h.spec.dump(), "test"), h.o);
  EXPECT_EQ(r.status, "infra_failed") << r.error;
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.error.find("starting pressure-gen: cannot exec"), std::string::npos) << r.error;
  ASSERT_FALSE(r.bundle_path.empty());
  EXPECT_EQ(bundle_status(r.bundle_path).first, "infra_failed");
  EXPECT_EQ(phase_file(h.o), "warmup");
  const auto phases = bundle_phases(r.bundle_path);
  EXPECT_EQ(std::find(phases.begin(), phases.end(), "recovery"), phases.end());
}

TEST(ExecutorFailurePhase, CanaryThatLeftNoTraceIsLost) {
  Scratch t;
  FaultScope f;
  auto h = runnable_host(t, f, "phase-no-trace", "static-zram");
  stand_in(t, "canary-sqlite", "echo '{}'\n");  // exits without writing its --trace
  expect_lost(harness::case_::run_case(harness::case_::parse_spec(h.spec.dump(), "test"), h.o), h.o, "canary-sqlite");
}

TEST(ExecutorFailurePhase, CancelledDuringPressureIsLost) {
  Scratch t;
  FaultScope f;
  auto h = runnable_host(t, f, "phase-cancel-pressure", "delayed-activation");
  // A long recovery: the cancel, not the end of the schedule, ends the case.
  h.spec["phases_s"] = {{"warmup", 1}, {"pressure", 1}, {"recovery", 60}};
  // The cancel arrives when pressure-gen starts, i.e. in the pressure phase (as the agent's
  // SIGTERM after a cancel would).
  stand_in(t, "pressure-gen", "kill -TERM $PPID\necho '{\"allocated_mib\": 600, \"allocation_elapsed_s\": 20}'\n");
  const auto r = harness::case_::run_case(harness::case_::parse_spec(h.spec.dump(), "test"), h.o);
  expect_lost(r, h.o, "cancelled by signal 15");
  EXPECT_EQ(bundle_outcome(r.bundle_path)["cancelled_by_signal"], 15);
}

TEST(ExecutorFailurePhase, CancelledDuringWarmupIsInfraFailed) {
  Scratch t;
  FaultScope f;
  auto h = runnable_host(t, f, "phase-cancel-warmup", "static-zram");
  h.spec["phases_s"] = {{"warmup", 60}, {"pressure", 1}, {"recovery", 1}};
  // canary-compute starts before T0: its cancel arrives before the pressure phase.
  const auto trace_src = (t.dir() / "compute.trace-src").string();
  stand_in(t, "canary-compute",
           "prev=\nfor a; do [ \"$prev\" = --trace ] && cp " + trace_src + " \"$a\"; prev=$a; done\nkill -TERM $PPID\n"
           "echo '{}'\n");
  const auto r = harness::case_::run_case(harness::case_::parse_spec(h.spec.dump(), "test"), h.o);
  EXPECT_EQ(r.status, "infra_failed") << r.error;
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.error.find("cancelled by signal 15"), std::string::npos) << r.error;
  ASSERT_FALSE(r.bundle_path.empty());
  EXPECT_EQ(bundle_status(r.bundle_path).first, "infra_failed");
  const auto phases = bundle_phases(r.bundle_path);
  EXPECT_EQ(std::find(phases.begin(), phases.end(), "pressure"), phases.end());
  EXPECT_NE(phase_file(h.o), "restoration");
}
