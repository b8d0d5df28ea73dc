#pragma once
// artifacts (results/schema.sql): the free-form reports of a case's processes (pressure-gen and
// canary JSON summaries, logs), by name.
//
// Errors: DbError on any SQLite failure.
#include "results/db.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace results {

/// The content of `case_id`'s artifact `name` (e.g. canary-sqlite.json); nullopt when it has
/// none or the file has no artifacts table.
std::optional<std::string> read_artifact(Db& db, const std::string& case_id, const std::string& name);

/// Inserts the artifacts (name, content) of `case_id`.
void insert_artifacts(Db& db, const std::string& case_id,
                      const std::vector<std::pair<std::string, std::string>>& artifacts);

}  // namespace results
