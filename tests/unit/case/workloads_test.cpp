// Workload command lines follow the flags of pressure/ and canaries/ (units converted).
#include <gtest/gtest.h>

#include <algorithm>

#include "harness/case/spec.hpp"
#include "harness/case/workloads.hpp"

namespace {
std::string after(const std::vector<std::string>& argv, const std::string& flag) {
  auto it = std::find(argv.begin(), argv.end(), flag);
  if (it == argv.end() || it + 1 == argv.end()) return "<missing>";
  return *(it + 1);
}
}  // namespace

TEST(Workloads, ArgvFromTheStudySpec) {
  auto spec = hcase::load_spec_file("tests/unit/case/fixtures/spec-study.json");
  hcase::Workloads w(spec, "/opt/h/bin", "/out/c.work");
  auto pg = w.pressure_gen(305);
  EXPECT_EQ(pg[0], "/opt/h/bin/pressure-gen");
  EXPECT_EQ(after(pg, "--allocation-mib"), "600");
  EXPECT_EQ(after(pg, "--rate-mib-s"), "32");
  EXPECT_EQ(after(pg, "--active-set-mib"), "128");
  EXPECT_EQ(after(pg, "--contents"), "structured");
  EXPECT_EQ(after(pg, "--seed"), "1");
  EXPECT_EQ(after(pg, "--duration-s"), "305");
  auto cc = w.canary_compute(123456789, 540);
  EXPECT_EQ(cc[0], "/opt/h/bin/canary-compute");
  EXPECT_EQ(after(cc, "--period-ms"), "100");
  EXPECT_EQ(after(cc, "--duration-s"), "540");
  EXPECT_EQ(after(cc, "--hot-mib"), "16");
  EXPECT_EQ(after(cc, "--start-at-ns"), "123456789");
  EXPECT_EQ(after(cc, "--trace"), "/out/c.work/canary-compute.trace");
  auto cs = w.canary_sqlite(123456789, 540);
  EXPECT_EQ(cs[0], "/opt/h/bin/canary-sqlite");
  EXPECT_EQ(cs[1], "run");
  EXPECT_EQ(after(cs, "--db"), "/var/lib/harness/canary.db");
  EXPECT_EQ(after(cs, "--queries-per-request"), "8");
  EXPECT_EQ(after(cs, "--start-at-ns"), "123456789");
  EXPECT_EQ(after(cs, "--trace"), "/out/c.work/canary-sqlite.trace");
}

TEST(Workloads, FractionalRateIsKept) {
  auto spec = hcase::load_spec_file("tests/unit/case/fixtures/spec-study.json");
  spec.pressure.rate_mib_s = 12.5;
  hcase::Workloads w(spec, "/b", "/w");
  EXPECT_EQ(after(w.pressure_gen(10), "--rate-mib-s"), "12.5");
}

TEST(Workloads, SlideDefaultsToTheCalibratedValueAndIsPassed) {
  // spec-study.json has no pressure.active_set_slide_mib_s: the calibrated default applies
  // (campaigns/README.md "Calibration"); an explicit 0 is the v1 fixed active set.
  auto spec = hcase::load_spec_file("tests/unit/case/fixtures/spec-study.json");
  EXPECT_DOUBLE_EQ(spec.pressure.active_set_slide_mib_s, 0.34);
  EXPECT_DOUBLE_EQ(hcase::kDefaultActiveSetSlideMibS, 0.34);
  hcase::Workloads w(spec, "/b", "/w");
  EXPECT_EQ(after(w.pressure_gen(10), "--active-set-slide-mib-s"), "0.34");
  spec.pressure.active_set_slide_mib_s = 0;
  EXPECT_EQ(after(hcase::Workloads(spec, "/b", "/w").pressure_gen(10), "--active-set-slide-mib-s"), "0");
}
