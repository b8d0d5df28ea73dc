#include "results/db.hpp"
#include "analysis/data/study_facts.hpp"
#include "harness/digest/sha256.hpp"
#include "harness/text/join.hpp"

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <map>

namespace results {
namespace {
std::string shorten(std::string_view sql) {
  std::string s(sql.substr(0, 120));
  for (auto& c : s)
    if (c == '\n') c = ' ';
  return sql.size() > 120 ? s + "..." : s;
}

/// Columns added in schema versions 3 and 4, in the order schema.sql declares them (ALTER TABLE
/// appends, so a migrated table has the same column order as a new one).
struct AddedColumn {
  const char* table;
  const char* column;
  const char* type;
};
constexpr AddedColumn kAddedColumns[] = {
    {"cases", "host_uri", "TEXT"},                 {"cases", "overcommitted", "INTEGER"},  // version 3
    {"telemetry", "bg_cpu_some_us", "INTEGER"},    {"telemetry", "bg_cpu_full_us", "INTEGER"},  // version 4
    {"telemetry", "bg_io_some_us", "INTEGER"},     {"telemetry", "bg_io_full_us", "INTEGER"},
    {"telemetry", "fg_cpu_some_us", "INTEGER"},    {"telemetry", "fg_cpu_full_us", "INTEGER"},
    {"telemetry", "fg_io_some_us", "INTEGER"},     {"telemetry", "fg_io_full_us", "INTEGER"},
    {"telemetry", "sys_cpu_some_us", "INTEGER"},   {"telemetry", "sys_cpu_full_us", "INTEGER"},
    {"telemetry", "sys_io_some_us", "INTEGER"},    {"telemetry", "sys_io_full_us", "INTEGER"},
    {"reclaim_actions", "write_cpu_us", "INTEGER"}};
/// Columns added in schema version 7, in schema.sql's order: added by apply_schema, in its one
/// transaction, to a file of version 6 (a file of an earlier layout is converted, which makes
/// its cases from schema.sql with them, so that a conversion stopped part-way leaves it as it was).
constexpr AddedColumn kVersion7Columns[] = {{"cases", "engine_kind", "TEXT"}};
/// Columns added in schema version 8 (telemetry_rows: the CPU time reclaim takes), in schema.sql's
/// order; added by add_version8_columns, in the one transaction that applies the schema.
constexpr AddedColumn kVersion8Columns[] = {{"telemetry_rows", "kswapd_cpu_us", "INTEGER"},
                                            {"telemetry_rows", "bg_cpu_usage_us", "INTEGER"},
                                            {"telemetry_rows", "bg_cpu_system_us", "INTEGER"},
                                            {"telemetry_rows", "fg_cpu_usage_us", "INTEGER"},
                                            {"telemetry_rows", "fg_cpu_system_us", "INTEGER"}};
constexpr const char* kSchemaVersion = "8";
/// Page size of a database file this class creates. 16 KiB instead of SQLite's 4 KiB: the
/// import of a study-sized bundle (2 x 5,400 canary rows with their key index entries) then
/// writes about a quarter as many WAL frames and b-tree pages, and checkpoints copy a quarter
/// as many, for less CPU per import (docs/DESIGN.md, "Runner at fleet scale", 2026-12-03).
/// The rows stored are the same; a file created before keeps its page size.
constexpr int kPageSize = 16384;

/// Whether `db` holds a results schema of before version 6: a cases table and no arms table.
bool before_arms(Db& db) { return has_table(db, "cases") && !has_table(db, "arms"); }

/// `cols` joined as a column list, each prefixed with `prefix` ("r." or "").
std::string column_list(const std::vector<std::string>& cols, const std::string& prefix = "") {
  return harness::text::join(cols, ", ", [&](const std::string& c) { return prefix + "\"" + c + "\""; });
}

ConversionObserver g_conversion_observer = nullptr;  // set_conversion_observer: none in the shipped binaries

void observe_conversion(Db& db, const char* step) {
  if (g_conversion_observer) g_conversion_observer(db, step);
}

/// History of version 5 and before (schema.sql): the one configuration whose cases carried its
/// memory.reclaim request in dose_bytes (the study's bounded reclaim, its treatment: the
/// study-facts file analysis/data/study_facts.hpp, a header of constants only), so the one arm
/// of a converted file that may get parameters ({"dose_mib": N}). A fixed fact of files written
/// before version 6, not a list of arms: a file's arms are its table arms, and the study's arms
/// are registered with their policies (harness/case/control/policy.hpp study_arms()).
constexpr const char* kVersion5DoseConfiguration = analysis::kStudyArms[analysis::kStudyTreatment].name;
constexpr std::int64_t kBytesPerMiB = 1024 * 1024;

/// The names a results file of before version 6 allowed in cases.configuration, in the order
/// of its CHECK list (cases' CREATE TABLE text: `CHECK (configuration IN ('a','b',...))`, which
/// versions 1 to 5 wrote in the study's order). Empty when the text has no such list.
std::vector<std::string> checked_configurations(Db& db) {
  std::string sql;
  {
    Stmt q(db, "SELECT sql FROM main.sqlite_master WHERE type = 'table' AND name = 'cases'");
    if (q.step()) sql = q.text(0);
  }
  std::vector<std::string> names;
  auto at = sql.find("configuration IN");
  if (at == std::string::npos) return names;
  at = sql.find('(', at);
  if (at == std::string::npos) return names;
  const auto close = sql.find(')', at);
  for (auto open = sql.find('\'', at); open != std::string::npos && open < close; open = sql.find('\'', open)) {
    const auto end = sql.find('\'', open + 1);
    if (end == std::string::npos || end > close) break;
    names.push_back(sql.substr(open + 1, end - open - 1));
    open = end + 1;
  }
  return names;
}

/// Fills arms (empty) of a file converted from before version 6: one row per configuration its
/// cases and schedule hold, policy = the name (every configuration of version 5 was a study arm
/// whose policy has its name), position in the order of `order` (the file's former CHECK list:
/// the study's order), compacted over the ones present; a name that list lacks comes after, in
/// name order. params_json is {} but for the dose-taking configuration: {"dose_mib": N} when
/// every row of it has the same dose (N = dose_bytes / MiB, an integer when whole), {} when
/// they differ (a pilot's doses) or one has none. sha256: of {"name","params","policy"} as
/// canonical JSON (nlohmann dump, keys sorted), as harness/case/control/arm.hpp hashes an arm.
void fill_arms(Db& db, const std::vector<std::string>& order) {
  std::vector<std::string> names;
  {
    Stmt q(db, "SELECT configuration FROM cases UNION SELECT configuration FROM schedule ORDER BY 1");
    while (q.step()) names.push_back(q.text(0));
  }
  const auto rank = [&](const std::string& n) {
    return static_cast<std::size_t>(std::find(order.begin(), order.end(), n) - order.begin());
  };
  std::stable_sort(names.begin(), names.end(), [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  Stmt ins(db, "INSERT INTO arms(name, policy, params_json, sha256, position) VALUES (?1, ?1, ?2, ?3, ?4)");
  std::int64_t position = 0;
  for (const auto& name : names) {
    nlohmann::json params = nlohmann::json::object();
    if (name == kVersion5DoseConfiguration) {
      Stmt d(db,
             "SELECT count(*), count(dose_bytes), min(dose_bytes), max(dose_bytes) FROM (SELECT dose_bytes FROM cases "
             "WHERE configuration = ?1 UNION ALL SELECT dose_bytes FROM schedule WHERE configuration = ?1)");
      d.bind(1, name);
      if (d.step() && d.int64(0) == d.int64(1) && d.int64(1) > 0 && d.int64(2) == d.int64(3) && d.int64(2) > 0) {
        const std::int64_t dose = d.int64(2);
        params["dose_mib"] = dose % kBytesPerMiB == 0
                                 ? nlohmann::json(dose / kBytesPerMiB)
                                 : nlohmann::json(static_cast<double>(dose) / static_cast<double>(kBytesPerMiB));
      }
    }
    const nlohmann::json arm = {{"name", name}, {"params", params}, {"policy", name}};
    ins.bind(1, name).bind(2, params.dump()).bind(3, harness::digest::sha256_hex(arm.dump())).bind(4, position++);
    ins.run();
  }
}

/// Version 8, inside the caller's transaction and before schema.sql is applied: adds its columns to
/// a telemetry_rows that lacks them (NULL for the file's earlier samples), and drops the view
/// telemetry when it lacks them (its INSTEAD OF triggers go with it), so that schema.sql makes the
/// view and its triggers again with them. A file whose telemetry is still a table (a layout before
/// version 5, renamed by convert) has no telemetry_rows yet: schema.sql makes it whole.
void add_version8_columns(Db& db) {
  for (const auto& c : kVersion8Columns)
    if (has_table(db, c.table) && !has_column(db, c.table, c.column))
      db.exec(std::string("ALTER TABLE ") + c.table + " ADD COLUMN " + c.column + " " + c.type);
  bool view = false;
  {
    Stmt q(db, "SELECT 1 FROM main.sqlite_master WHERE type = 'view' AND name = 'telemetry'");
    view = q.step();
  }  // finalized before DROP VIEW
  if (view && !has_column(db, "telemetry", kVersion8Columns[0].column)) db.exec("DROP VIEW telemetry");
}

/// Brings a file of before version 6 to this version, inside the caller's transaction, the way
/// SQLite documents for a change ALTER TABLE cannot make (lang_altertable.html "Making Other
/// Kinds Of Table Schema Changes"): cases is renamed, schema.sql creates the new cases (without
/// version 5's CHECK list on configuration), arms and the triggers, the rows are copied, the
/// former table is dropped and cases' own indexes and triggers are created again. Rows and
/// their order are kept, and their case_key in a file of version 5; the views and the tables
/// that reference cases name it, not the former table (legacy_alter_table, set by the caller).
/// A file of a layout before version 5 is converted in the same pass: its rows of
/// canary_requests, telemetry and controller_events are copied into <name>_rows under their
/// case's key (the columns both have; the rest NULL) and the former tables dropped, so that
/// <name> becomes the view. Then arms is filled (fill_arms). Throws DbError when a former
/// table holds rows of a case id that cases lacks (they would have no key).
void convert(Db& db) {
  const bool keyed = has_column(db, "cases", "case_key");  // version 5: only cases changes
  const std::vector<std::string> order = checked_configurations(db);
  std::vector<std::pair<std::string, std::string>> own;  // cases' indexes and triggers (name, sql)
  {
    Stmt q(db,
           "SELECT name, sql FROM main.sqlite_master WHERE tbl_name = 'cases' AND type IN ('index', 'trigger') AND "
           "sql IS NOT NULL");
    while (q.step()) own.emplace_back(q.text(0), q.text(1));
  }
  add_version8_columns(db);  // while cases has its name: the view telemetry reads it
  db.exec("ALTER TABLE cases RENAME TO cases_before_v6");
  if (!keyed)
    for (const char* t : kCaseKeyedTables) db.exec(std::string("ALTER TABLE ") + t + " RENAME TO " + t + "_before_v5");
  db.exec(schema_sql());
  observe_conversion(db, "renamed");
  const auto shared = [&](const std::string& to, const std::string& from) {
    const auto mine = table_columns(db, "main", from);
    std::vector<std::string> cols;
    for (auto& c : table_columns(db, "main", to))
      if ((keyed || c != "case_key") && c != "case_id" && std::find(mine.begin(), mine.end(), c) != mine.end())
        cols.push_back(c);
    return cols;
  };
  const auto case_cols = shared("cases", "cases_before_v6");
  db.exec("INSERT INTO cases(case_id, " + column_list(case_cols) + ") SELECT case_id, " + column_list(case_cols) +
          " FROM cases_before_v6 ORDER BY " + (keyed ? "case_key" : "rowid"));
  if (!keyed)
    for (const char* t : kCaseKeyedTables) {
      const std::string from = std::string(t) + "_before_v5";
      std::int64_t orphans = 0;
      {
        Stmt q(db, "SELECT count(*) FROM " + from + " WHERE case_id NOT IN (SELECT case_id FROM cases)");
        if (q.step()) orphans = q.int64(0);
      }  // finalized: an open statement on the table would keep DROP TABLE from running
      if (orphans > 0)
        throw DbError(db.path() + ": cannot bring the file to schema version " + kSchemaVersion + ": " + t + " holds " +
                      std::to_string(orphans) +
                      " rows whose case_id is in no row of cases (they would have no case_key); the file is "
                      "unchanged and can still be read (read-only)");
      const auto cols = shared(std::string(t) + "_rows", from);
      db.exec(std::string("INSERT INTO ") + t + "_rows(case_key, " + column_list(cols) + ") SELECT c.case_key, " +
              column_list(cols, "r.") + " FROM " + from + " r JOIN cases c ON c.case_id = r.case_id ORDER BY c.case_key");
      db.exec("DROP TABLE " + from);
    }
  db.exec("DROP TABLE cases_before_v6");
  for (const auto& [name, sql] : own) {
    Stmt q(db, "SELECT 1 FROM main.sqlite_master WHERE name = ?1");
    q.bind(1, name);
    if (!q.step()) db.exec(sql);
  }
  observe_conversion(db, "copied");
  fill_arms(db, order);
  observe_conversion(db, "filled");
  db.exec(std::string("UPDATE schema_info SET value = '") + kSchemaVersion + "' WHERE key = 'schema_version'");
}

/// Applies schema.sql to `db`; a database of a layout before version 6 is converted first
/// (convert), in one transaction, so that a conversion stopped part-way (an error, a kill, a
/// power loss) leaves the file as it was, at its former version, and the next open for writing
/// converts it again. Other tables are untouched (their foreign keys name cases, which the new
/// cases keeps: case_id unique, case_key as it was). Throws DbError, leaving the file as it was.
void apply_schema(Db& db) {
  if (!before_arms(db)) {
    // One transaction: the schema_version row and every table, view and trigger commit
    // together, so a file at the current version has all of them (schema_is_current). A file
    // of version 6 or 7 needs no conversion: it gains version 7's and 8's columns (NULL for its
    // rows), the telemetry view made again with version 8's, and the version in this transaction.
    db.transaction([&] {
      for (const auto& c : kVersion7Columns)
        if (has_table(db, c.table) && !has_column(db, c.table, c.column))
          db.exec(std::string("ALTER TABLE ") + c.table + " ADD COLUMN " + c.column + " " + c.type);
      add_version8_columns(db);
      db.exec(schema_sql());
      db.exec(std::string("UPDATE schema_info SET value = '") + kSchemaVersion +
              "' WHERE key = 'schema_version' AND CAST(value AS INTEGER) < " + kSchemaVersion);
    });
    return;
  }
  // Foreign keys off: DROP TABLE of the former tables must not cascade. legacy_alter_table:
  // the rename of cases must leave "cases" in the views, their triggers and the other tables'
  // REFERENCES as it is (the new cases takes that name), where SQLite would otherwise rewrite
  // them to the renamed table.
  db.exec("PRAGMA foreign_keys = OFF");
  db.exec("PRAGMA legacy_alter_table = ON");
  try {
    db.transaction([&] {
      if (!before_arms(db)) {  // another writer converted it meanwhile
        db.exec(schema_sql());
        return;
      }
      convert(db);
    });
  } catch (...) {
    db.exec("PRAGMA legacy_alter_table = OFF");
    throw;
  }
  db.exec("PRAGMA legacy_alter_table = OFF");
}

/// Whether `db` holds the schema of this version or a later one (schema_info), so that
/// opening it for writing has nothing to apply: the schema is applied in one transaction and
/// the version is raised to it only by the transaction that completes a conversion. Two reads, where applying the
/// schema parses all of schema.sql and takes the write lock (INSERT OR IGNORE of the version):
/// one open per runner worker, and 200 workers opened at once at 200 hosts (fleet_bench).
bool schema_is_current(Db& db) {
  if (!has_table(db, "schema_info")) return false;
  Stmt q(db, "SELECT CAST(value AS INTEGER) FROM schema_info WHERE key = 'schema_version'");
  return q.step() && q.int64(0) >= std::stoll(kSchemaVersion);
}

/// Adds the columns of schema versions 3 and 4 (schema.sql) that the tables of an existing file
/// lack, NULL for its rows, and records version 4 in the same transaction. Runs before
/// apply_schema, so that a version-4 layout's tables have every column when they are converted;
/// a table the file lacks (or holds as a view) is left to apply_schema.
void add_columns(Db& db) {
  const auto lacks = [&](const AddedColumn& c) { return has_table(db, c.table) && !has_column(db, c.table, c.column); };
  if (std::none_of(std::begin(kAddedColumns), std::end(kAddedColumns), lacks)) return;
  db.transaction([&] {
    for (const auto& c : kAddedColumns)  // again inside the write lock: another writer may have migrated
      if (lacks(c)) db.exec(std::string("ALTER TABLE ") + c.table + " ADD COLUMN " + c.column + " " + c.type);
    db.exec("UPDATE schema_info SET value = '4' WHERE key = 'schema_version' AND CAST(value AS INTEGER) < 4");
  });
}
/// Turns SQLite's memory statistics off for this process, once, before its first connection
/// (SQLITE_CONFIG_MEMSTATUS only applies before SQLite initialises). With them on (Debian's
/// build), every allocation and free inside SQLite takes one process-wide mutex: a runner with
/// 200 workers (fleet_bench --hosts 200) spent about a quarter of its CPU waking waiters of that
/// mutex (perf, docs/DESIGN.md "Runner at fleet scale", 2026-12-04). Nothing here reads the
/// statistics (sqlite3_memory_used) or sets a soft heap limit, which need them. When SQLite was
/// already initialised by someone else, this does nothing (SQLITE_MISUSE, ignored).
void disable_memstatus() {
  static std::once_flag once;
  std::call_once(once, [] { sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
}

/// The write lock of this process for the database file `path` (Db::transaction).
std::shared_ptr<std::recursive_mutex> write_turn_for(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<std::recursive_mutex>> turns;
  std::error_code ec;
  std::string key = std::filesystem::weakly_canonical(path, ec).string();
  if (ec || key.empty()) key = path;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = turns.find(key); it != turns.end())
    if (auto t = it->second.lock()) return t;
  // A new file (or one no Db holds any more): drop the entries of files no Db holds, so a
  // runner opening one bundle file per case does not grow this map for the whole campaign.
  std::erase_if(turns, [](const auto& e) { return e.second.expired(); });
  auto t = std::make_shared<std::recursive_mutex>();
  turns[key] = t;
  return t;
}
}  // namespace

void set_conversion_observer(ConversionObserver observer) { g_conversion_observer = observer; }

Db::Db(const std::string& path, Mode mode) : path_(path), write_turn_(write_turn_for(path)) {
  int flags = SQLITE_OPEN_NOMUTEX;
  if (mode == Mode::ReadOnly) {
    flags |= SQLITE_OPEN_READONLY;
  } else {
    flags |= SQLITE_OPEN_READWRITE;
    if (mode == Mode::Create) flags |= SQLITE_OPEN_CREATE;
  }
  if (mode != Mode::Create && !std::filesystem::exists(path))
    throw DbError(path + ": no such database file");
  disable_memstatus();
  int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw DbError(path + ": cannot open: " + msg);
  }
  sqlite3_busy_timeout(db_, 10000);
  try {
    set_up(mode);
  } catch (...) {  // the destructor does not run for a constructor that throws
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw;
  }
}

void Db::set_up(Mode mode) {
  if (mode != Mode::ReadOnly) {
    std::lock_guard<std::recursive_mutex> turn(*write_turn_);
    // A new file gets kPageSize pages (SQLite ignores this for a file that already has pages).
    if (mode == Mode::Create) exec("PRAGMA page_size=" + std::to_string(kPageSize));
    exec("PRAGMA journal_mode=WAL");
    exec("PRAGMA synchronous=NORMAL");
    if (!schema_is_current(*this)) {
      add_columns(*this);
      apply_schema(*this);
    }
  } else {
    // Fail early with a clear message when the file is not a results database.
    Stmt s(*this, "SELECT value FROM schema_info WHERE key='schema_version'");
    if (!s.step()) throw DbError(path_ + ": not a harness results database (no schema_version)");
  }
  exec("PRAGMA foreign_keys=ON");
}

Db::~Db() { sqlite3_close_v2(db_); }

void Db::exec(std::string_view sql) {
  std::string s(sql);
  char* err = nullptr;
  if (sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw DbError(path_ + ": " + msg + " in: " + shorten(sql));
  }
}

std::int64_t Db::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

std::vector<std::string> table_columns(Db& db, const std::string& schema, const std::string& table) {
  Stmt q(db, "PRAGMA \"" + schema + "\".table_info(\"" + table + "\")");
  std::vector<std::string> names;
  while (q.step()) names.push_back(q.text(1));
  return names;
}

bool has_table(Db& db, const std::string& table) {
  Stmt q(db, "SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = ?1");
  q.bind(1, table);
  return q.step();
}

bool has_column(Db& db, const std::string& table, const std::string& column) {
  Stmt q(db, "SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2");
  q.bind(1, table).bind(2, column);
  return q.step() && q.int64(0) > 0;
}

Stmt::Stmt(Db& db, std::string_view sql) : db_(db), sql_(sql) {
  if (sqlite3_prepare_v2(db.db_, sql_.c_str(), static_cast<int>(sql_.size()), &stmt_, nullptr) != SQLITE_OK)
    throw DbError(db.path_ + ": " + sqlite3_errmsg(db.db_) + " in: " + shorten(sql_));
}

Stmt::~Stmt() { sqlite3_finalize(stmt_); }

#define HK_CHECK_BIND(expr)                                                               \
  do {                                                                                    \
    if ((expr) != SQLITE_OK)                                                              \
      throw DbError(db_.path_ + ": bind failed: " + sqlite3_errmsg(db_.db_) + " in: " + \
                    shorten(sql_));                                                       \
  } while (0)

Stmt& Stmt::bind(int i, std::int64_t v) {
  HK_CHECK_BIND(sqlite3_bind_int64(stmt_, i, v));
  return *this;
}
Stmt& Stmt::bind(int i, double v) {
  HK_CHECK_BIND(sqlite3_bind_double(stmt_, i, v));
  return *this;
}
Stmt& Stmt::bind(int i, std::string_view v) {
  HK_CHECK_BIND(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  return *this;
}
Stmt& Stmt::bind_null(int i) {
  HK_CHECK_BIND(sqlite3_bind_null(stmt_, i));
  return *this;
}
Stmt& Stmt::bind(int i, const Value& v) {
  if (std::holds_alternative<std::monostate>(v)) return bind_null(i);
  if (auto* x = std::get_if<std::int64_t>(&v)) return bind(i, *x);
  if (auto* x = std::get_if<double>(&v)) return bind(i, *x);
  return bind(i, std::string_view(std::get<std::string>(v)));
}
#undef HK_CHECK_BIND

bool Stmt::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw DbError(db_.path_ + ": " + sqlite3_errmsg(db_.db_) + " in: " + shorten(sql_));
}

void Stmt::run() {
  while (step()) {
  }
  reset();
}

void Stmt::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int Stmt::columns() const { return sqlite3_column_count(stmt_); }
bool Stmt::is_null(int c) const { return sqlite3_column_type(stmt_, c) == SQLITE_NULL; }
std::int64_t Stmt::int64(int c) const { return sqlite3_column_int64(stmt_, c); }
double Stmt::real(int c) const { return sqlite3_column_double(stmt_, c); }
std::string Stmt::text(int c) const {
  auto* p = sqlite3_column_text(stmt_, c);
  return p ? std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, c)) : std::string();
}
std::optional<std::int64_t> Stmt::opt_int64(int c) const {
  return is_null(c) ? std::nullopt : std::optional<std::int64_t>(int64(c));
}
std::optional<double> Stmt::opt_real(int c) const {
  return is_null(c) ? std::nullopt : std::optional<double>(real(c));
}
std::optional<std::string> Stmt::opt_text(int c) const {
  return is_null(c) ? std::nullopt : std::optional<std::string>(text(c));
}
Value Stmt::value(int c) const {
  switch (sqlite3_column_type(stmt_, c)) {
    case SQLITE_NULL: return std::monostate{};
    case SQLITE_INTEGER: return int64(c);
    case SQLITE_FLOAT: return real(c);
    default: return text(c);
  }
}
std::string Stmt::column_name(int c) const { return sqlite3_column_name(stmt_, c); }

}  // namespace results
