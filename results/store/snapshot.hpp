#pragma once
// A consistent copy of a results DB file (SQLite's VACUUM INTO): every committed row, whatever
// is still in the WAL, compacted; the file being copied is not changed.
#include "results/db.hpp"

#include <string>

namespace results {

/// Writes a copy of `db` to `path` (a new file). Throws DbError (the file exists, cannot be written).
void copy_db_file(Db& db, const std::string& path);

}  // namespace results
