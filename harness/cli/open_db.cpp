// Checked opening of the DB a user names (see open_db.hpp).
#include "harness/cli/open_db.hpp"

#include "harness/text/join.hpp"
#include "results/db.hpp"
#include "results/store/meta.hpp"

#include <filesystem>
#include <fstream>
#include <regex>
#include <vector>

namespace harness::cli {
namespace {

namespace fs = std::filesystem;

/// Existence, file type and SQLite header. Returns false for an empty file.
bool check_file(const std::string& path) {
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (!fs::exists(st))
    throw DbFileError(path + ": no such DB file (a campaign DB is made by `harness plan FILE DB` or `harness run "
                             "FILE DB`)");
  if (fs::is_directory(st)) throw DbFileError(path + ": is a directory, not a DB file");
  if (!fs::is_regular_file(st)) throw DbFileError(path + ": is not a regular file, not a DB file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DbFileError(path + ": cannot be read (permission?)");
  char head[16] = {};
  in.read(head, sizeof head);
  if (in.gcount() == 0) return false;
  if (in.gcount() < 16 || std::string(head, 16) != std::string("SQLite format 3\0", 16))
    throw DbFileError(path + ": is not an SQLite database, so not a harness DB (wrong file?)");
  return true;
}

/// The harness tables `kind` needs that `db` lacks, and whether a plan is stored.
void check_tables(results::Db& db, const std::string& path, DbKind kind) {
  const std::vector<std::string> need = kind == DbKind::Campaign
                                            ? std::vector<std::string>{"cases", "schedule", "attempts", "campaign_meta"}
                                            : std::vector<std::string>{"cases"};
  std::vector<std::string> absent;
  for (const auto& t : need)
    if (!results::has_table(db, t)) absent.push_back(t);
  const std::string missing = harness::text::join(absent);
  if (!missing.empty())
    throw DbFileError(path + ": is an SQLite database but not a harness " +
                      (kind == DbKind::Campaign ? "campaign DB" : "results DB") + " (no table " + missing + ")");
  if (kind == DbKind::Campaign) {
    if (!results::meta_value(db, "schedule_sha256"))
      throw DbFileError(path + ": holds no campaign plan (a case bundle or an empty DB?); plan one with `harness plan "
                               "FILE " + path + "`");
  }
}

std::unique_ptr<results::Db> open_checked(const std::string& path, DbKind kind, results::Db::Mode mode) {
  if (!check_file(path)) throw DbFileError(path + ": is an empty file, not a harness DB");
  std::unique_ptr<results::Db> db;
  try {
    // Read-only first: never writes the schema into a file that turns out to be foreign.
    db = std::make_unique<results::Db>(path, results::Db::Mode::ReadOnly);
    check_tables(*db, path, kind);
  } catch (const results::DbError& e) {
    std::string why = strip_sql(e.what());
    if (why.rfind(path + ": ", 0) == 0) why = why.substr(path.size() + 2);
    throw DbFileError(path + ": not a harness results DB (" + why + ")");
  }
  if (mode == results::Db::Mode::ReadOnly) return db;
  db.reset();
  return std::make_unique<results::Db>(path, mode);
}

}  // namespace

std::unique_ptr<results::Db> open_db(const std::string& path, DbKind kind) {
  return open_checked(path, kind, results::Db::Mode::ReadOnly);
}

std::unique_ptr<results::Db> open_db_rw(const std::string& path, DbKind kind) {
  return open_checked(path, kind, results::Db::Mode::ReadWrite);
}

void check_db_writable_target(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return;
  try {
    if (!check_file(path)) return;  // empty file: SQLite makes it a DB
  } catch (const DbFileError& e) {
    throw DbFileError(std::string(e.what()) + "; refusing to write into it");
  }
  try {
    results::Db db(path, results::Db::Mode::ReadOnly);
    const std::vector<std::string> need{"cases", "schedule", "attempts", "campaign_meta"};
    for (const auto& t : need)
      if (!results::has_table(db, t))
        throw DbFileError(path + ": is an SQLite database but not a harness campaign DB (no table " + t +
                          "); refusing to write into it");
  } catch (const results::DbError& e) {
    std::string why = strip_sql(e.what());
    if (why.rfind(path + ": ", 0) == 0) why = why.substr(path.size() + 2);
    throw DbFileError(path + ": not a harness results DB (" + why + "); refusing to write into it");
  }
}

std::string strip_sql(const std::string& msg) {
  static const std::regex sql(
      R"( in: (SELECT|INSERT|UPDATE|DELETE|CREATE|PRAGMA|BEGIN|COMMIT|ROLLBACK|WITH|ALTER|DROP|REPLACE|ATTACH)\b[^\n]*)",
      std::regex::icase);
  return std::regex_replace(msg, sql, "");
}

}  // namespace harness::cli
