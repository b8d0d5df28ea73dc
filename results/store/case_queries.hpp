#pragma once
// The narrower questions asked of cases (results/schema.sql), each answered by SQLite as its
// caller has always asked it: ids, distinct values, counts. Whole rows: cases.hpp.
//
// Errors: DbError on any SQLite failure (a file without the tables a question names included).
#include "results/db.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace results {

/// (case_id, status) of every case, by case id.
std::vector<std::pair<std::string, std::string>> case_statuses(Db& db);

/// Ids of the completed cases, by case id.
std::vector<std::string> completed_case_ids(Db& db);

/// Ids of the cases of arm `configuration` that are not completed, in storage order.
std::vector<std::string> uncompleted_case_ids(Db& db, const std::string& configuration);

/// Ids of the completed cases that are scheduled, in plan order: every one, or with
/// `configuration` those of that arm (schedule.configuration). `completed` names the state.
std::vector<std::string> completed_scheduled_case_ids(Db& db, const std::string& completed,
                                                      const std::optional<std::string>& configuration = std::nullopt);

/// Each case id of schedule in state `state`, in plan order, and its cases.outcome_json
/// (nullopt when it has no cases row or no outcome).
std::vector<std::pair<std::string, std::optional<std::string>>> scheduled_outcomes(Db& db, const std::string& state);

/// (case_id, configuration) of every case, in no particular order.
std::vector<std::pair<std::string, std::string>> case_configurations_by_id(Db& db);

/// The distinct cases.configuration values, in no particular order.
std::vector<std::string> case_configurations(Db& db);

/// The distinct regimes of cases, and of schedule when the file has one, in no particular order.
std::vector<std::string> case_and_schedule_regimes(Db& db);

/// What ran the cases, for an artifact's provenance (results/provenance.hpp): the distinct
/// values, sorted, NULL left out. Commits carry "-dirty" when source_dirty is 1.
std::vector<std::string> case_accelerators(Db& db);
std::vector<std::string> case_kernel_releases(Db& db);
std::vector<std::string> case_commits(Db& db);
std::vector<std::string> case_campaigns(Db& db);

/// The distinct kernel_release of the completed cases of arm `configuration`, sorted (NULL,
/// not recorded, first as nullopt).
std::vector<std::optional<std::string>> completed_kernel_releases(Db& db, const std::string& configuration);

/// Cases in a matched triplet (triplet_id set): how many, and the smallest id.
struct TripletCases {
  std::int64_t count = 0;
  std::optional<std::string> first_id;
};
TripletCases triplet_cases(Db& db);

/// Cases with status `status`: how many, how many campaign names, and those names joined with ","
/// (SQLite's group_concat; nullopt when none).
struct CaseCampaigns {
  std::int64_t count = 0, campaigns = 0;
  std::optional<std::string> names;
};
CaseCampaigns case_campaigns_with_status(Db& db, const std::string& status);

/// Cases with status `status` whose spec_json variant.name is `variant`.
std::int64_t count_variant_cases(Db& db, const std::string& status, const std::string& variant);

/// Cases that ran on an overcommitted host: how many, and their hosts (host_uri, distinct,
/// joined with ","; nullopt when not recorded). Count 0 when the file predates the column.
struct OvercommittedCases {
  std::int64_t count = 0;
  std::optional<std::string> hosts;
};
OvercommittedCases overcommitted_cases(Db& db);

/// The guest kernel one case recorded (cases table), for the KCIDB file of `harness check`
/// (harness/campaign/check/check_kcidb.hpp): "" where the case did not record it.
struct CaseKernel {
  std::string case_id;
  std::string variant;   ///< spec_json variant.name (A/B: baseline | candidate), "" for other designs
  std::string release;   ///< cases.kernel_release (uname -r)
  std::string version;   ///< environment_json uname.version (uname -v: build number, date, distribution package)
  std::string machine;   ///< environment_json uname.machine (uname -m, e.g. x86_64)
  std::string accelerator;  ///< cases.accelerator
  std::optional<std::int64_t> started_unix_ns, ended_unix_ns;  ///< wall clock, ns since the epoch
};

/// Every case of `db` with what it recorded of its kernel, in case id order (a spec_json or
/// environment_json that is not valid JSON gives "").
std::vector<CaseKernel> case_kernels(Db& db);

/// True when some case's source_commit is `commit` (e.g. "synthetic": the generator's mark,
/// results/provenance.hpp is_synthetic_db).
bool has_case_with_commit(Db& db, const std::string& commit);

/// Rows of cases.
std::int64_t case_count(Db& db);

}  // namespace results
