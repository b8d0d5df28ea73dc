#pragma once
// Column presence in a results DB: a DB written before schema version 2 lacks the v2 columns
// (results/schema.sql); the analysis reads them only when present and reports "not measured"
// otherwise (never zero).
#include "results/db.hpp"

#include <string>

namespace analysis {

/// True when `table` exists and has a column named `column` (PRAGMA table_info).
bool has_column(results::Db& db, const std::string& table, const std::string& column);

/// True when `table` exists.
bool has_table(results::Db& db, const std::string& table);

}  // namespace analysis
