#pragma once
// What `harness plan` of an A/B campaign says about the smallest change its planned pairs can
// detect, and the refusal of an insensitive `kind: ci` design (ours; docs/CI.md "What a design
// can detect"). The statistics are analysis/detectable.hpp's.
#include "analysis/detectable.hpp"
#include "harness/campaign/campaign.hpp"
#include "harness/campaign/schedule.hpp"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace harness::campaign {

/// Planned pairs per stratum "vm/regime/configuration" of an ab-pairs schedule (a pair = its
/// two cases).
std::map<std::string, int> planned_pairs_per_stratum(const Schedule& s);

/// The sensitivity section of `harness plan`.
struct PlanSensitivity {
  std::vector<analysis::DetectableChange> metrics;  ///< one per toleranced metric (empty: cannot know)
  /// What plan prints: the level, the planned pairs, per metric the smallest ratio detected
  /// as a change and as past the tolerance (or why it cannot be known). "" for other designs.
  std::string text;
  /// Non-empty when the plan is refused: `kind: ci`, some metric insensitive (its smallest
  /// detectable change is past its tolerance) and regression.accept_insensitive not set. Names
  /// each such metric, the field and the override.
  std::string refusal;
};

/// The "change from 1" and "past tolerance" cells of one metric's row: ">= R" / "<= R" (the
/// smallest ratio detected, analysis/detectable.hpp); "none" for both when the planned design
/// has one pair per stratum (df 0: no interval, nothing is detectable); "any (sigma 0)" when the
/// noise DB's pairs have no spread for the metric. Pure; `d.sigma` must be set.
std::pair<std::string, std::string> detectable_cells(const analysis::DetectableChange& d);

/// The sensitivity of `c` (planned as `s`) with the spread of `variance_db`'s pairs ("" = no
/// DB: the text says it cannot know and nothing is refused). The level is the plain check's,
/// 1 - alpha / m. Errors: results::DbError when the DB cannot be read.
PlanSensitivity plan_sensitivity(const Campaign& c, const Schedule& s, const std::string& variance_db);

}  // namespace harness::campaign
