// Table 4 and the absolute differences (see table4_primary.hpp).
#include "analysis/tables/table4_primary.hpp"

#include "analysis/data/arms.hpp"

#include <fmt/format.h>

namespace analysis {

Table table4(const PrimaryResult& pr, const std::vector<Sensitivity>& sens) {
  const std::string lv = fmt::format("{:.2f}%", pr.level * 100);
  Table t{"table4_primary",
          pr.study_family
              ? "Table 4. Primary comparisons: pressure-phase p99 response-time ratio, bounded reclaim / comparator"
              : "Table 4. Primary comparisons (the declared family of " + std::to_string(pr.m) +
                    "): pressure-phase p99 response-time ratio, treatment / comparator",
          {{"comparison", 0}, {pr.unit + "s", 0, "triplets"}, {"ratio", 3, "ratio"}, {"lower (" + lv + ")", 3, "ratio_lower"},
           {"upper (" + lv + ")", 3, "ratio_upper"}, {"change (%)", 1, "change_pct"}, {"harm", 0},
           {"corrected lower (secondary)", 3, "corrected_lower"}, {"corrected upper (secondary)", 3, "corrected_upper"},
           {"analysis", 0}},
          {}, {}};
  auto rows = [&](const PrimaryResult& p, const std::string& analysis) {
    for (const auto& c : p.comparisons)
      t.add({c.label, c.triplets, num(c.estimate), num(c.lower), num(c.upper), num(c.percent_change),
             !p.verdict.assessable ? "not assessable" : c.lower > 1 ? "HARM" : "no", num(c.corrected_lower),
             num(c.corrected_upper), analysis});
  };
  rows(pr, "primary");
  for (const auto& s : sens) {
    if (s.pr) rows(*s.pr, s.name);
    else t.notes.push_back(fmt::format("Sensitivity \"{}\": not computed: {}.", s.name, s.why_none));
    if (!s.note.empty()) t.notes.push_back(s.note);
  }
  if (!pr.study_family) t.notes.push_back("Comparisons: " + family_text(pr.family) + ".");
  t.notes.push_back(fmt::format(
      fmt::runtime(pr.study_family ? "Ratio = exp(mean over (vm, regime) strata of the stratum mean of ln(p99_reclaim / p99_comparator)); "
      "values below 1 favour bounded reclaim. Interval: stratified percentile bootstrap, B = {}, seed = {}, "
      "simultaneous level 1 - {}/{} = {} per comparison (the study's prespecified interval: the primary result). "
      "CSV: ratio_lower / ratio_upper are this interval."
      : "Ratio = exp(mean over (vm, regime) strata of the stratum mean of ln(p99_treatment / p99_comparator)); "
      "values below 1 favour the treatment. Interval: stratified percentile bootstrap, B = {}, seed = {}, "
      "simultaneous level 1 - {}/{} = {} per comparison (the study's prespecified interval: the primary result). "
      "CSV: ratio_lower / ratio_upper are this interval."),
      pr.replicates, pr.seed, pr.alpha, pr.m, lv));
  t.notes.push_back(
      "Corrected interval (secondary, labelled): each resampled stratum mean rescaled about the stratum mean by "
      "sqrt(n/(n-1)) (analysis/README.md); it does not enter the verdict.");
  t.notes.push_back(fmt::format(
      "Column analysis: \"primary\" rows decide the verdict. Sensitivity rows (same estimator, B and seed; never in "
      "the verdict): \"complete cases\" leaves out every {0} with a lost member instead of imputing its p99 "
      "(strata left without a {0} drop out); \"original outcomes reinstated\" puts back the outcome of every case "
      "an operator overrode with harness mark-infra --override-outcome (docs/PROTOCOL.md).",
      pr.unit));
  return t;
}

Table absdiff(const PrimaryResult& pr) {
  const std::string lv = fmt::format("{:.2f}%", pr.level * 100);
  Table t{"absolute_differences",
          pr.study_family ? "Absolute p95 and p99 differences (bounded reclaim minus comparator)"
                          : "Absolute p95 and p99 differences (treatment minus comparator)",
          // Microseconds, the study's unit for absolute differences ("the latency in one
          // configuration minus the latency in the other, in microseconds").
          {{"comparison", 0}, {"quantile", 0}, {"difference (us)", 1, "difference_us"},
           {"lower (us, " + lv + ")", 1, "difference_lower_us"}, {"upper (us, " + lv + ")", 1, "difference_upper_us"}},
          {}, {}};
  for (const auto& a : pr.abs_diffs) t.add({a.label, a.quantile, num(a.estimate_us), num(a.lower_us), num(a.upper_us)});
  t.notes.push_back(pr.study_family
                        ? "Mean over strata of stratum-mean paired differences in microseconds (the study's unit); "
                          "same bootstrap replicates (same resampling indices) as Table 4. Negative = reclaim faster."
                        : "Mean over strata of stratum-mean paired differences in microseconds (the study's unit); "
                          "same bootstrap replicates (same resampling indices) as Table 4. Negative = the treatment "
                          "faster.");
  return t;
}

}  // namespace analysis
