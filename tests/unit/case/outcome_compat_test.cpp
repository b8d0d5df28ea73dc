// cases.outcome_json held to fixtures captured from the executor as it was before it was
// split into rooms (tests/unit/case/fixtures/outcome/*.json): whole cases run over the
// scratch copy of the 6.1 guest capture (case_scratch.hpp), each ending somewhere else
// (leftover, variant, setup, canary start, pressure-gen start, a completed schedule of
// each configuration). Every key, its nesting and its JSON type must be the same, and
// every value too except the run's measurements (times, CPU, RSS, pids, missed ticks).
// The scratch dir's random name is replaced by <scratch> and the canaries' --start-at-ns
// by <ns> before comparing.
//
// Capture (how the fixtures were made): HARNESS_OUTCOME_CAPTURE_DIR=DIR makes every
// scenario also write its outcome to DIR/<scenario>.json; copy them into
// tests/unit/case/fixtures/outcome/.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/common/json_compare.hpp"
#include "tests/common/slurp.hpp"
#include "tests/unit/case/case_scratch.hpp"

using namespace case_test;

namespace {

const std::string kFixtures = std::string(HARNESS_SOURCE_DIR) + "/tests/unit/case/fixtures/outcome/";

/// `j` with every occurrence of `dir` in its strings replaced by <scratch>, and the value
/// after each "--start-at-ns" (the schedule origin, a CLOCK_MONOTONIC time) by <ns>.
nlohmann::json masked(nlohmann::json j, const std::string& dir) {
  if (j.is_string()) {
    std::string s = j.get<std::string>();
    for (std::size_t at; (at = s.find(dir)) != std::string::npos;) s.replace(at, dir.size(), "<scratch>");
    return s;
  }
  if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) {
      j[i] = masked(j[i], dir);
      if (i > 0 && j[i - 1] == "--start-at-ns") j[i] = "<ns>";
    }
  }
  if (j.is_object())
    for (auto it = j.begin(); it != j.end(); ++it) it.value() = masked(it.value(), dir);
  return j;
}

/// A measurement of this run, or the build that ran it (source.commit, .dirty): its value
/// may differ from the fixture's, its type may not.
bool measured(const std::string& path) {
  std::string key = path.substr(path.rfind('.') == std::string::npos ? 0 : path.rfind('.') + 1);
  key = key.substr(0, key.find('['));
  auto ends = [&](const std::string& s) { return key.size() >= s.size() && key.compare(key.size() - s.size(), s.size(), s) == 0; };
  return ends("_ns") || key == "pid" || key == "vcpu_fraction" || key == "peak_rss_kib" || key == "peak_rss_sum_kib" ||
         key == "missed_ticks" || key == "commit" || key == "dirty" ||
         // trigger windows judged and irregular: they follow the run's tick timing as missed_ticks does
         key == "windows" || key == "irregular_windows";
}

/// Compares (or, in capture mode, also writes) the outcome of scenario `name`.
void expect_outcome(const std::string& name, const std::string& bundle_path, const Scratch& t) {
  ASSERT_FALSE(bundle_path.empty()) << name << ": no bundle";
  const auto got = masked(bundle_outcome(bundle_path), t.dir().string());
  if (const char* cap = std::getenv("HARNESS_OUTCOME_CAPTURE_DIR")) {
    std::filesystem::create_directories(cap);
    std::ofstream(std::string(cap) + "/" + name + ".json") << got.dump(2) << "\n";
  }
  const std::string file = kFixtures + name + ".json";
  ASSERT_TRUE(std::filesystem::exists(file)) << "missing fixture " << file;
  const auto want = nlohmann::json::parse(test_support::slurp(file));
  const auto diff = test_support::json_differences(want, got, measured);
  std::string all;
  for (const auto& d : diff) all += "\n  " + d;
  EXPECT_TRUE(diff.empty()) << name << ": outcome_json differs from " << file << ":" << all;
}

}  // namespace

TEST(OutcomeCompat, LeftoverThatCannotBeReleased) {
  Scratch t;
  const auto o = executor_host(t);
  t.put("proc/swaps", "Filename Type Size Used Priority\n" + kSwapfile + " file 65532 24576 -2\n");
  t.put("proc/4242/status", "Name:\tholder\nState:\tT (stopped)\nVmSwap:\t   24576 kB\n");
  t.put("proc/4242/cgroup", "0::/holder\n");
  FaultScope f;
  f.fail(kSwapfile, ENOMEM, FsOp::Swapoff);
  stub_swap(f);
  expect_outcome("leftover", harness::case_::run_case(executor_spec(t, "compat-leftover"), o).bundle_path, t);
}

TEST(OutcomeCompat, VariantOnTheWrongGuest) {
  Scratch t;
  FaultScope f;
  auto r = run_candidate(t, f, "compat-wrong-guest",
                         {{"sysctls", {{"vm.swappiness", "20"}}}, {"cmdline", {"harness.abtest=1"}}});
  expect_outcome("variant-wrong-guest", r.bundle_path, t);
}

TEST(OutcomeCompat, VariantKnobThatCannotBeWritten) {
  Scratch t;
  FaultScope f;
  f.fail("sys/kernel/mm/lru_gen/enabled", EPERM, FsOp::Write);
  auto r = run_candidate(t, f, "compat-write-fails",
                         {{"sysctls", {{"vm.swappiness", "20"}}},
                          {"sysfs", {{"/sys/kernel/mm/lru_gen/enabled", "0x0007"}}}});
  expect_outcome("variant-write-fails", r.bundle_path, t);
}

TEST(OutcomeCompat, VariantAppliedThenSetupFails) {
  Scratch t;
  FaultScope f;
  f.fail("sys/fs/cgroup/harness", EPERM, FsOp::Mkdir);
  auto r = run_candidate(t, f, "compat-variant-setup", {{"sysctls", {{"vm.swappiness", "20"}}}});
  expect_outcome("variant-setup-fails", r.bundle_path, t);
}

TEST(OutcomeCompat, CanariesCannotStart) {
  Scratch t;
  FaultScope f;
  f.fail("harness/fg/cgroup.procs", EPERM, FsOp::Write);  // first match wins: before the stubs
  auto h = runnable_host(t, f, "compat-canaries", "static-zram");
  expect_outcome("canaries-cannot-start", harness::case_::run_case(harness::case_::parse_spec(h.spec.dump(), "test"), h.o).bundle_path, t);
}

TEST(OutcomeCompat, PressureGenCannotStart) {
  Scratch t;
  FaultScope f;
  f.fail("harness/bg/cgroup.procs", EPERM, FsOp::Write);
  auto h = runnable_host(t, f, "compat-pressure-gen", "bounded-reclaim");
  expect_outcome("pressure-gen-cannot-start", harness::case_::run_case(harness::case_::parse_spec(h.spec.dump(), "test"), h.o).bundle_path,
                 t);
}

TEST(OutcomeCompat, CompletedScheduleOfEachConfiguration) {
  for (const char* conf : {"static-zram", "delayed-activation", "bounded-reclaim"}) {
    SCOPED_TRACE(conf);
    Scratch t;
    FaultScope f;
    auto h = runnable_host(t, f, std::string("compat-") + conf, conf);
    auto r = harness::case_::run_case(harness::case_::parse_spec(h.spec.dump(), "test"), h.o);
    EXPECT_EQ(r.status, "completed") << r.error;
    expect_outcome(std::string("completed-") + conf, r.bundle_path, t);
  }
}
