#pragma once
// One checked way for a `harness` subcommand to open the SQLite DB the user named, so that
// a wrong file gets a plain sentence naming it (exit 2, harness/cli/exit_codes.hpp) and
// never an SQLite statement (ours: no SQL in user errors).
#include "results/db.hpp"

#include <memory>
#include <string>

namespace harness::cli {

/// What a subcommand needs from the DB file.
enum class DbKind {
  Results,   ///< any harness results DB: the `cases` table (analyze, a case bundle)
  Campaign,  ///< a campaign DB: `schedule`, `attempts` and `campaign_meta` (status, export, run, ...)
};

/// A user-facing error about the DB file (missing, not SQLite, not a harness DB, wrong
/// tables). what() names the file and never holds SQL. main() exits 2 on it.
class DbFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Opens `path` read-only after checking, in order: it exists and is a regular file; it
/// starts with the SQLite header; SQLite opens it as a harness results DB (schema_info);
/// it has the tables of `kind`. Throws DbFileError naming `path` and what is wrong.
std::unique_ptr<results::Db> open_db(const std::string& path, DbKind kind);

/// Same checks, then opens read-write (mark-infra). Throws DbFileError.
std::unique_ptr<results::Db> open_db_rw(const std::string& path, DbKind kind);

/// For commands that create the DB when missing (plan, run, check): nothing when `path`
/// does not exist or is an empty file; otherwise the checks of open_db with
/// DbKind::Campaign. Throws DbFileError.
void check_db_writable_target(const std::string& path);

/// `msg` without the " in: <SQL>" tail that results::DbError adds (ours). Used by main()
/// for any message that still carries one.
std::string strip_sql(const std::string& msg);

}  // namespace harness::cli
