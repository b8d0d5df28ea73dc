#pragma once
// What `harness plan` of an A/B campaign says about the smallest change its planned pairs can
// detect, and the refusal of an insensitive `kind: ci` design (ours; docs/CI.md "What a design
// can detect"). The statistics are analysis/stats/detectable.hpp's.
#include "analysis/stats/detectable.hpp"
#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/plan/schedule.hpp"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace harness::campaign {

/// Planned pairs per stratum "vm/regime/configuration" of an ab-pairs schedule (a pair = its
/// two cases).
std::map<std::string, int> planned_pairs_per_stratum(const Schedule& s);

/// Why the sensitivity section refuses a plan.
struct SensitivityRefusal {
  enum class Kind {
    /// The --variance-from DB is of the wrong kind: a campaign DB of another design (no
    /// baseline/candidate pairs), or one whose pairs give the noise of no toleranced metric.
    /// The DB is named and blamed, whatever the campaign's kind (exit 2, preview or not).
    wrong_db,
    /// `kind: ci`, some metric insensitive (its smallest detectable change is past its
    /// tolerance) and regression.accept_insensitive not set: names each metric, the pairs its
    /// tolerance needs, the fields and the override (preregistration refuses; a preview warns).
    insensitive,
  };
  Kind kind;
  std::string why;  ///< the message with its remedy, ending in a newline
};

/// The sensitivity section of `harness plan`.
struct PlanSensitivity {
  std::vector<analysis::DetectableChange> metrics;  ///< one per toleranced metric (empty: cannot know)
  /// Per entry of `metrics`: the design.repeats its tolerance needs (analysis/stats/detectable.hpp
  /// repeats_needed, with the metric's sigma and strata).
  std::vector<analysis::RepeatsNeeded> needed;
  /// What plan prints: the level, the planned pairs, per metric the smallest ratio detected
  /// as a change and as past the tolerance and the pairs its tolerance needs (or why it cannot
  /// be known). "" for other designs.
  std::string text;
  std::optional<SensitivityRefusal> refusal;  ///< nullopt: nothing refused
};

/// The "change from 1" and "past tolerance" cells of one metric's row: ">= R" / "<= R" (the
/// smallest ratio detected, analysis/stats/detectable.hpp); "none" for both when the planned design
/// has one pair per stratum (df 0: no interval, nothing is detectable); "any (sigma 0)" when the
/// noise DB's pairs have no spread for the metric. Pure; `d.sigma` must be set.
std::pair<std::string, std::string> detectable_cells(const analysis::DetectableChange& d);

/// The "tolerance needs" cell of one metric's row: "N (repeats R)", N = R x `strata` (every
/// planned stratum gets design.repeats pairs), "> N (repeats R)" beyond the search's cap, "-"
/// when it cannot be known. Pure.
std::string needed_cell(const analysis::RepeatsNeeded& n, int strata);

/// The sensitivity of `c` (planned as `s`) with the spread of `variance_db`'s pairs ("" = no
/// DB: the text says it cannot know and nothing is refused). The level is the plain check's,
/// 1 - alpha / m. Per metric with a sigma, the design.repeats (and pairs) at which a change as
/// large as its tolerance is detected, from the same sigma (ours, issue 59). A DB whose stored
/// campaign is not design ab-pairs, or whose pairs give no toleranced metric any noise, is
/// SensitivityRefusal::wrong_db. Errors: results::DbError when the DB cannot be read.
PlanSensitivity plan_sensitivity(const Campaign& c, const Schedule& s, const std::string& variance_db);

}  // namespace harness::campaign
