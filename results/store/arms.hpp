#pragma once
// arms (results/schema.sql, version 6): the campaign's arms, one row each, written when a plan
// is stored (harness/campaign/store/plan_store.hpp); a case bundle's is empty.
//
// Errors: DbError on any SQLite failure.
#include "results/db.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace results {

/// One row of arms.
struct ArmRow {
  std::string name;         ///< the arm's name, as cases.configuration and schedule.configuration hold it
  std::string policy;       ///< the registered policy it runs (harness/case/control/policy.hpp)
  std::string params_json;  ///< the policy's parameters as canonical JSON; {} when its cases disagree
  std::string sha256;       ///< SHA-256 (hex) of {"name","params","policy"} as canonical JSON
  std::int64_t position = 0;  ///< report order, 0-based
};

/// Every arm in report order (position, then name); empty when the file has no arms table (a
/// DB written before version 6, read-only) or the table is empty.
std::vector<ArmRow> read_arms(Db& db);

/// Inserts `arms` in order.
void insert_arms(Db& db, const std::vector<ArmRow>& arms);

}  // namespace results
