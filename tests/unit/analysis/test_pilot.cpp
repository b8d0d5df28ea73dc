// Pilot dose selection: the largest eligible dose is chosen; every failed criterion is named.
#include "analysis/pilot.hpp"
#include "analysis/synthetic.hpp"

#include "golden_db.hpp"

#include <gtest/gtest.h>

#include <cerrno>

namespace {
constexpr std::int64_t MiB = 1048576;
bool any_contains(const std::vector<std::string>& v, const std::string& s) {
  for (const auto& w : v)
    if (w.find(s) != std::string::npos) return true;
  return false;
}
}  // namespace

TEST(Pilot, AllPassChoosesLargest) {
  const auto path = golden::temp_db("pilot_ok");
  analysis::write_synthetic_pilot(path, {{16 * MiB, 0.3, 1.1}, {32 * MiB, 0.4, 1.0}, {64 * MiB, 0.6, 0.95}, {96 * MiB, 0.9, 0.85}}, 1, 5);
  const auto r = analysis::select_dose(path);
  ASSERT_EQ(r.doses.size(), 4u);
  for (const auto& d : r.doses) {
    EXPECT_TRUE(d.eligible) << d.dose_bytes;
    EXPECT_EQ(d.cases, 4);
  }
  ASSERT_TRUE(r.chosen_bytes);
  EXPECT_EQ(*r.chosen_bytes, 96 * MiB);
  EXPECT_NEAR(*r.doses[3].worst_duration_s, 0.9, 1e-9);
  EXPECT_NEAR(*r.doses[3].min_achieved_ratio, 0.85, 1e-6);
  const auto rep = analysis::pilot_report(path, r);
  EXPECT_NE(analysis::render_markdown(rep).find("**Chosen dose: 96 MiB**"), std::string::npos);
}

TEST(Pilot, FailedCriteriaNamedAndLargestEligibleChosen) {
  const auto path = golden::temp_db("pilot_fail");
  std::vector<analysis::SyntheticDose> doses{
      {16 * MiB, 0.3, 1.1},
      {32 * MiB, 0.5, 0.9},
      {64 * MiB, 1.3, 0.9},                       // too slow
      {96 * MiB, 0.9, 0.7, EINVAL, true, false},  // partial, interface error, OOM, dirty restoration
  };
  analysis::write_synthetic_pilot(path, doses, 1, 5);
  const auto r = analysis::select_dose(path);
  ASSERT_TRUE(r.chosen_bytes);
  EXPECT_EQ(*r.chosen_bytes, 32 * MiB);
  EXPECT_FALSE(r.doses[2].eligible);
  EXPECT_TRUE(any_contains(r.doses[2].failed, "reclaim took 1.300 s > 1.0 s"));
  const auto& f = r.doses[3].failed;
  EXPECT_TRUE(any_contains(f, "achieved 0.70 of the request < 0.80"));
  EXPECT_TRUE(any_contains(f, "interface error: memory.reclaim write errno 22"));
  EXPECT_TRUE(any_contains(f, "OOM: 1 oom_kill event(s)"));
  EXPECT_TRUE(any_contains(f, "restoration not clean"));
  EXPECT_TRUE(any_contains(f, "pilot-vm0-slow-structured-dose96"));  // names the case
}

TEST(Pilot, NoEligibleDoseAndNotAPilotDb) {
  const auto path = golden::temp_db("pilot_none");
  analysis::write_synthetic_pilot(path, {{16 * MiB, 2.0, 0.5}}, 1, 5);
  const auto r = analysis::select_dose(path);
  EXPECT_FALSE(r.chosen_bytes);
  EXPECT_NE(analysis::render_markdown(analysis::pilot_report(path, r)).find("No eligible dose"), std::string::npos);
  const auto empty = golden::temp_db("pilot_empty");
  golden::write(empty, {{"vm0", "r", 1, "static-zram", 1000, 1000}});
  EXPECT_THROW(analysis::select_dose(empty), std::invalid_argument);
}
