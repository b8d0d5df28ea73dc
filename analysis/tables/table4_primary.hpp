#pragma once
// Table 4 of the report (the primary comparisons: p99 ratio, simultaneous interval, harm, the
// corrected secondary interval, the sensitivity rows) and the absolute p95/p99 differences (us).
#include "analysis/tables/table.hpp"
#include "analysis/tables/primary.hpp"
#include "analysis/tables/sensitivity.hpp"

#include <vector>

namespace analysis {

/// Table 4 (`table4_primary`): one row per comparison of `pr` (analysis "primary"), then the rows
/// of each sensitivity analysis that has estimates (a note for one that has none), with the notes
/// on the estimator, the interval (B, seed, level 1 - alpha/m) and the sensitivity rows.
Table table4(const PrimaryResult& pr, const std::vector<Sensitivity>& sens);

/// Table `absolute_differences`: per comparison the p95 and p99 difference (treatment minus
/// comparator, us: the study's unit) with its interval at Table 4's level.
Table absdiff(const PrimaryResult& pr);

}  // namespace analysis
