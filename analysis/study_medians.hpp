#pragma once
// The study's published mechanism medians per configuration (study text: "Median
// accumulated some stall time and full stall time ...", refault counts, swap-out). Used
// for comparison only: the mechanism table's "study" column and the calibration target; and
// the study's Table 4 (`harness compare --published`).

namespace analysis {

/// One configuration's medians: swap-out in KiB, refault count, PSI some/full stall in s. The
/// study does not say whose PSI these are ("Median accumulated some stall time and full stall
/// time"): bg, fg or the whole system. The reports show this campaign's bg, fg and system
/// stall beside them (analysis/README.md "Comparing with the study").
struct StudyMechanism {
  double swapout_kib;
  double refaults;
  double some_s;  ///< PSI some, owner not stated
  double full_s;  ///< PSI full, owner not stated
};

/// Indexed by the study's arm order (kStudyArms): static-zram, delayed-activation, bounded-reclaim.
inline constexpr StudyMechanism kStudyMechanism[3] = {
    {99198, 34104, 1.818, 1.730}, {103028, 32905, 1.515, 1.306}, {99027, 32786, 1.342, 1.114}};

/// The study's three arms in the study's order, with the short names of its comparison labels
/// ("compute: reclaim / static"). THE one place the study's arm names live on the analysis side:
/// hk_analysis does not link the executor's policy registry (harness/case, study_arms()), it must
/// read version-5 DBs that have no `arms` table (their arms are the study's, in this order), and
/// the study's published numbers here (kStudyMechanism, kStudyTable4) are keyed by these arms.
/// Everything else takes the arms from the DB's `arms` table or the cases (analysis/arms.hpp).
struct StudyArm {
  const char* name;
  const char* short_label;
};
inline constexpr StudyArm kStudyArms[3] = {{"static-zram", "static"}, {"delayed-activation", "delayed"},
                                           {"bounded-reclaim", "reclaim"}};
/// Position in kStudyArms of the study's treatment: the numerator of its four comparisons, and the
/// treatment of the legacy comparison spelling "<canary>:<comparator>".
inline constexpr int kStudyTreatment = 2;
/// Position in kStudyArms of the arm whose zram is swapped on only after the trigger.
inline constexpr int kStudyDelayedArm = 1;

/// The study's published Table 4 (study text: "the reclaim-to-static ratio was 0.938 with
/// interval [0.906, 0.971]", ...): p99 response-time ratio bounded reclaim / comparator with its
/// simultaneous 98.75% interval, in study_comparisons() order (analysis/arms.hpp): compute / static, compute /
/// delayed, sqlite / static, sqlite / delayed. Used by `harness compare --published`.
struct StudyRatio {
  double estimate;
  double lower;
  double upper;
};
inline constexpr StudyRatio kStudyTable4[4] = {
    {0.938, 0.906, 0.971}, {0.704, 0.675, 0.735}, {0.993, 0.968, 1.020}, {0.765, 0.726, 0.806}};
/// Matched triplets behind the study's Table 4 and cases per configuration behind its medians.
inline constexpr int kStudyTriplets = 60;

}  // namespace analysis
