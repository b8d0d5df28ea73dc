// Workload command lines follow the flags of pressure/ and canaries/ (units converted).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "harness/case/spec/spec.hpp"
#include "harness/case/spec/workloads.hpp"

namespace {
std::string after(const std::vector<std::string>& argv, const std::string& flag) {
  auto it = std::find(argv.begin(), argv.end(), flag);
  if (it == argv.end() || it + 1 == argv.end()) return "<missing>";
  return *(it + 1);
}

/// Each flag of `want` is in `argv` followed by its value (one EXPECT per flag).
void expect_flags(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& want) {
  for (const auto& [flag, value] : want) EXPECT_EQ(after(argv, flag), value) << flag;
}
}  // namespace

TEST(Workloads, ArgvFromTheStudySpec) {
  auto spec = harness::case_::load_spec_file("tests/unit/case/fixtures/spec-study.json");
  harness::case_::Workloads w(spec, "/opt/h/bin", "/out/c.work");
  auto pg = w.pressure_gen(305);
  EXPECT_EQ(pg[0], "/opt/h/bin/pressure-gen");
  expect_flags(pg, {{"--allocation-mib", "600"},
                    {"--rate-mib-s", "32"},
                    {"--active-set-mib", "128"},
                    {"--contents", "structured"},
                    {"--seed", "1"},
                    {"--duration-s", "305"}});
  auto cc = w.canary_compute(123456789, 540);
  EXPECT_EQ(cc[0], "/opt/h/bin/canary-compute");
  expect_flags(cc, {{"--period-ms", "100"},
                    {"--duration-s", "540"},
                    {"--hot-mib", "16"},
                    {"--start-at-ns", "123456789"},
                    {"--trace", "/out/c.work/canary-compute.trace"}});
  auto cs = w.canary_sqlite(123456789, 540);
  EXPECT_EQ(cs[0], "/opt/h/bin/canary-sqlite");
  EXPECT_EQ(cs[1], "run");
  expect_flags(cs, {{"--db", "/var/lib/harness/canary.db"},
                    {"--queries-per-request", "8"},
                    {"--start-at-ns", "123456789"},
                    {"--trace", "/out/c.work/canary-sqlite.trace"}});
}

TEST(Workloads, FractionalRateIsKept) {
  auto spec = harness::case_::load_spec_file("tests/unit/case/fixtures/spec-study.json");
  spec.pressure.rate_mib_s = 12.5;
  harness::case_::Workloads w(spec, "/b", "/w");
  EXPECT_EQ(after(w.pressure_gen(10), "--rate-mib-s"), "12.5");
}

TEST(Workloads, SlideDefaultsToTheCalibratedValueAndIsPassed) {
  // spec-study.json has no pressure.active_set_slide_mib_s: the calibrated default applies
  // (campaigns/README.md "Calibration"); an explicit 0 is the v1 fixed active set.
  auto spec = harness::case_::load_spec_file("tests/unit/case/fixtures/spec-study.json");
  EXPECT_DOUBLE_EQ(spec.pressure.active_set_slide_mib_s, 0.34);
  EXPECT_DOUBLE_EQ(harness::case_::kDefaultActiveSetSlideMibS, 0.34);
  harness::case_::Workloads w(spec, "/b", "/w");
  EXPECT_EQ(after(w.pressure_gen(10), "--active-set-slide-mib-s"), "0.34");
  spec.pressure.active_set_slide_mib_s = 0;
  EXPECT_EQ(after(harness::case_::Workloads(spec, "/b", "/w").pressure_gen(10), "--active-set-slide-mib-s"), "0");
}
