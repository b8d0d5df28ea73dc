#pragma once
// The design and the expected coverage of the intervals in the report: the design table (strata,
// blocks, analytic and simulated coverage) and what the design does to the estimate and the
// intervals (unequal strata, the small-sample caution).
#include "analysis/data/triplets.hpp"
#include "analysis/report/report_table.hpp"
#include "analysis/tables/primary.hpp"

namespace analysis {

/// Table `design_coverage`: strata, blocks, the design, nominal level, the analytic expected
/// coverage per comparison and joint (prespecified and corrected interval; analysis/stats/
/// coverage.hpp), and the measured coverage when this design was simulated (coverage_report.hpp).
Table design_table(const PrimaryResult& pr, const TripletSet& ts);

/// What the design does to the estimate and the intervals: unequal strata (a summary line) and
/// undercoverage of small strata (a warning, with the simulated figure when known).
void design_cautions(const PrimaryResult& pr, const TripletSet& ts, Report& r);

}  // namespace analysis
