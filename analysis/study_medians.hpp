#pragma once
// The study's published mechanism medians per configuration (study text: "Median
// accumulated some stall time and full stall time ...", refault counts, swap-out). Used
// for comparison only: the mechanism table's "study" column and the calibration target.

namespace analysis {

/// One configuration's medians: swap-out in KiB, refault count, bg PSI some/full stall in s.
struct StudyMechanism {
  double swapout_kib;
  double refaults;
  double bg_some_s;
  double bg_full_s;
};

/// Indexed by analysis::Config order: static-zram, delayed-activation, bounded-reclaim.
inline constexpr StudyMechanism kStudyMechanism[3] = {
    {99198, 34104, 1.818, 1.730}, {103028, 32905, 1.515, 1.306}, {99027, 32786, 1.342, 1.114}};

}  // namespace analysis
