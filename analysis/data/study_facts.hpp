#pragma once
// The study's published facts, the one place they live: its three arms as the study spells them,
// its mechanism medians per arm ("Median
// accumulated some stall time and full stall time ...", refault counts, swap-out), its Table 4
// (the ratios and simultaneous intervals of its four comparisons) and the matched triplets behind
// them. Used for comparison only: `harness compare --published` (analysis/compare/), the
// mechanism table's "study" column, the calibration target (harness/calibrate/choose.hpp), the
// truth of the coverage simulation's study family (analysis/simulate/coverage_sim.hpp).
//
// The arm names are the study's; the executor registers the same arms with their policies
// (harness/case/policies/, PolicyInfo::study_position; harness/case/control/policy.hpp
// study_arms()), and tests/unit/campaign/arms_test.cpp checks that both spell the same names in
// the same order. Code that runs cases takes the names from that registry or from the campaign;
// the analysis takes them from the DB's `arms` table and from here only where it must know the
// study's arms without one: hk_analysis does not link the executor's registry, and a version-5
// DB has no `arms` table (its arms are the study's, in this order; results/db.cpp converts it).
// tests/unit/registry/check_arm_lists.py fails on the names written anywhere else in the product.

#include <array>
#include <cstddef>

namespace analysis {

/// The study's three arms in the study's order. Comparison labels use these names as declared
/// ("compute: bounded-reclaim / static-zram"), as they use any other arm's (analysis/data/arms.hpp
/// comparison_label).
struct StudyArm {
  const char* name;
};
inline constexpr StudyArm kStudyArms[3] = {{"static-zram"}, {"delayed-activation"}, {"bounded-reclaim"}};
/// Position in kStudyArms of static zram: zram on from the start, no action (the calibration's arm).
inline constexpr int kStudyStaticArm = 0;
/// Position in kStudyArms of the arm whose zram is swapped on only after the trigger.
inline constexpr int kStudyDelayedArm = 1;
/// Position in kStudyArms of the study's treatment: the numerator of its four comparisons, the
/// treatment of the legacy comparison spelling "<canary>:<comparator>", the pilot's arm and the
/// one arm whose cases carry a dose (dose_bytes).
inline constexpr int kStudyTreatment = 2;
/// Number of the study's arms (3: a matched triplet).
inline constexpr std::size_t kStudyArmCount = std::size(kStudyArms);

/// One arm's medians: swap-out in KiB, refault count, PSI some/full stall in s. The study does not
/// say whose PSI these are ("Median accumulated some stall time and full stall time"): bg, fg or
/// the whole system. The reports show this campaign's bg, fg and system stall beside them
/// (analysis/README.md "Comparing with the study").
struct StudyMechanism {
  double swapout_kib;
  double refaults;
  double some_s;  ///< PSI some, owner not stated
  double full_s;  ///< PSI full, owner not stated
};

/// Indexed by the study's arm order (kStudyArms).
inline constexpr StudyMechanism kStudyMechanism[3] = {
    {99198, 34104, 1.818, 1.730}, {103028, 32905, 1.515, 1.306}, {99027, 32786, 1.342, 1.114}};

/// The study's published Table 4 (study text: "the reclaim-to-static ratio was 0.938 with
/// interval [0.906, 0.971]", ...): p99 response-time ratio bounded reclaim / comparator with its
/// simultaneous 98.75% interval, in study_comparisons() order (analysis/data/arms.hpp): compute / static, compute /
/// delayed, sqlite / static, sqlite / delayed.
struct StudyRatio {
  double estimate;
  double lower;
  double upper;
};
inline constexpr StudyRatio kStudyTable4[4] = {
    {0.938, 0.906, 0.971}, {0.704, 0.675, 0.735}, {0.993, 0.968, 1.020}, {0.765, 0.726, 0.806}};
/// Number of the study's primary comparisons (4).
inline constexpr std::size_t kStudyComparisonCount = std::size(kStudyTable4);

/// The estimates of kStudyTable4, in its order (the default truth of synthetic campaigns and of
/// the coverage simulation's study family).
constexpr std::array<double, kStudyComparisonCount> study_table4_estimates() {
  std::array<double, kStudyComparisonCount> e{};
  for (std::size_t j = 0; j < kStudyComparisonCount; ++j) e[j] = kStudyTable4[j].estimate;
  return e;
}

/// Matched triplets behind the study's Table 4 and cases per configuration behind its medians.
inline constexpr int kStudyTriplets = 60;

}  // namespace analysis
