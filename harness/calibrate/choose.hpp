#pragma once
// The calibration rule and table. Study's static-zram medians (the target):
// swap-out 99,198 KiB, refaults 34,104, bg PSI some 1.818 s, full 1.730 s.
// Rule: the chosen point minimises max(|swap-out / 99,198 KiB - 1|, |refaults / 34,104 - 1|)
// over the 300 s projection (the measured value when the phase was 300 s), refaults =
// bg workingset_refault_anon. Stall times are shown, labelled "TCG-inflated" when a point ran
// under TCG, and take no part in the rule (they depend on the accelerator; counts depend
// little on it).
#include <optional>
#include <string>
#include <vector>

#include "analysis/data/study_facts.hpp"
#include "harness/calibrate/grid.hpp"
#include "harness/calibrate/measure.hpp"

namespace harness::calibrate {

/// The study's static-zram medians (analysis/data/study_facts.hpp). Its PSI stall figures name no
/// owner (bg, fg or system); the table prints them in its bg columns, for reference only: the
/// choice uses swap-out and refaults.
struct Target {
  double swapout_kib = analysis::kStudyMechanism[0].swapout_kib;
  double refaults = analysis::kStudyMechanism[0].refaults;
  double some_s = analysis::kStudyMechanism[0].some_s;
  double full_s = analysis::kStudyMechanism[0].full_s;
};

/// max relative error of swap-out and refaults (300 s projection); nullopt when unknown.
std::optional<double> max_rel_error(const Measured& m, const Target& t = {});

/// Index of the point with the smallest max_rel_error (ties: the first); nullopt if none.
std::optional<std::size_t> choose(const std::vector<Measured>& ms, const Target& t = {});

/// Markdown table: study row, then one row per point (chosen marked), and the rule. The stall
/// columns' headings say "(TCG-inflated)" when any point ran under TCG (Measured::accelerator),
/// "(KVM)" when all ran under KVM, and name the accelerators otherwise.
std::string table(const std::vector<Point>& points, const std::vector<Measured>& ms, const Target& t = {});

}  // namespace harness::calibrate
