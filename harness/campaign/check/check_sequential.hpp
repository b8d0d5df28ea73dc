#pragma once
// `harness check --until-decided --max-pairs N` (ours; docs/CI.md "Deciding with more pairs"):
// the campaign the check plans and the cases each look runs. The statistics (looks, level,
// verdicts, when to stop) are analysis/stats/sequential.hpp's.
//
// The plan holds every pair up to the cap (design.repeats raised to the cap, recorded in the
// schedule JSON "sequential"), so the preregistration is made before the first case runs and
// a resumed check (--reuse) plans the same. Look k runs the cases of repeats 1..r_k (the
// runner's skip list holds the rest) into the same DB; the blocks' seeded order is the plan's.
#include "analysis/stats/sequential.hpp"
#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/check/check_judge.hpp"
#include "results/db.hpp"

#include <optional>
#include <set>
#include <string>

namespace harness::campaign {

/// Pairs one repeat adds: vms x regimes x arms (ab-pairs blocks).
int pairs_per_repeat(const Campaign& c);

/// `c` planned for a sequential check capped at `max_pairs` pairs: repeats = max_pairs /
/// pairs_per_repeat(c) (rounded down) and `sequential` set. Throws CampaignError (naming
/// c.file and the field) when `c` is not ab-pairs, has no tolerance, allocates by
/// triplets_per_regime, or the cap is below design.repeats' pairs.
Campaign sequential_campaign(const Campaign& c, int max_pairs);

/// The looks of a campaign from sequential_campaign(): look_schedule(first_repeats,
/// cap_repeats). std::logic_error when `seq.sequential` is not set.
analysis::LookSchedule sequential_looks(const Campaign& seq);

/// The case ids of `seq`'s plan that look `look` (1-based) does not run yet: repeat > the
/// look's repeats. std::out_of_range for a look outside 1..K.
std::set<std::string> cases_after_look(const Campaign& seq, int look);

/// The look a DB of `seq`'s plan has reached (1-based): the first look whose cases include
/// every case with an attempt or a schedule state other than pending in `db` (1 when nothing
/// ran). `harness check --judge` of a
/// sequential check judges that look's cases: the later looks' pairs were never run on purpose.
/// Errors: results::DbError.
int look_reached(const Campaign& seq, results::Db& db);

/// Whether a sequential check stops after a look judged as `j`: it found something (a failed
/// assertion or a regression), could not judge, or every metric with a tolerance is decided
/// (analysis::sequential_stop). Pure.
bool look_decides(const Judgement& j);

/// The --max-pairs a DB's stored plan was made with (schedule JSON "sequential.max_pairs");
/// nullopt when the DB holds no plan or a plan of a plain check.
std::optional<int> stored_max_pairs(results::Db& db);

}  // namespace harness::campaign
