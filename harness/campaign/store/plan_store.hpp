#pragma once
// The plan stored in a campaign DB (the preregistration): campaign_meta, arms and schedule,
// written once and verified against its SHA-256 before every run (docs/PROTOCOL.md; the rows:
// results/store/).
#include "harness/campaign/plan/schedule.hpp"
#include "results/db.hpp"

#include <stdexcept>
#include <string>

namespace harness::campaign {

/// The stored schedule does not match its preregistered hash (or the campaign file).
class ScheduleTampered : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Stores the plan in an empty campaign DB: campaign_meta keys name, seed, campaign_file,
/// campaign_dir (the absolute folder of the campaign's relative paths, Campaign::base_dir, when
/// known), campaign_yaml, campaign_sha256, schedule_json, schedule_sha256, planned_unix_ns; one arms
/// row per arm of the cases (results/schema.sql version 6: name = configuration, the policy and
/// params of its cases' specs, {} when they disagree, as a pilot's doses do; SHA-256 of the
/// arm's canonical JSON; position in the order of the plan JSON's `arms`, else the study's);
/// and one schedule row per case (state pending). If the DB already holds a plan with the same
/// hash this is a no-op; a different plan throws ScheduleTampered (one campaign per DB). A case
/// whose policy is not registered or whose parameters are wrong, or one arm with two policies,
/// throws std::invalid_argument.
void store_plan(results::Db& db, const Campaign& c, const Schedule& s);

/// True when the DB holds a plan.
bool has_plan(results::Db& db);

/// The campaign of the plan stored in `db` (at `db_path`), as `harness run DB` runs it: the
/// campaign_yaml stored at plan, named "<campaign_file> (as stored in <db_path>)" in errors,
/// its relative paths (variants.*.kernel.image_dir, design.dose_mib.from_pilot) resolved
/// against campaign_dir, the campaign file's folder at plan, so they name what the plan named
/// whatever the working directory now. A DB planned before campaign_dir was stored: the folder
/// of campaign_file when that is absolute, else unknown, and a relative path is refused
/// (CampaignError naming the field, asking for the campaign FILE). std::runtime_error when
/// the DB holds no plan. `pinned_commit: build` is left as stored (resolve_build_pin).
Campaign stored_campaign(results::Db& db, const std::string& db_path);

/// Loads the stored plan and verifies it: SHA-256 of campaign_meta.schedule_json equals
/// campaign_meta.schedule_sha256, and the schedule table rows equal the JSON rows (ids,
/// order, vm, regime, repeat, triplet, configuration, dose). Throws ScheduleTampered
/// naming the first difference.
Schedule load_verified_plan(results::Db& db);

}  // namespace harness::campaign
