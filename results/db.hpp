#pragma once
// Thin RAII layer over SQLite for the results schema (results/schema.sql).
//
// Errors: every failure throws results::DbError whose message names the
// database file, the SQL (shortened) and SQLite's message.
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace results {

/// Thrown on any SQLite failure; what() names the file and the statement.
class DbError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A bound or read value: NULL, integer, real or text.
using Value = std::variant<std::monostate, std::int64_t, double, std::string>;

class Db;

/// A prepared statement. Bind with 1-based indices; step() returns true per row.
class Stmt {
 public:
  Stmt(Db& db, std::string_view sql);
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& bind(int index, std::int64_t v);
  Stmt& bind(int index, int v) { return bind(index, static_cast<std::int64_t>(v)); }
  Stmt& bind(int index, double v);
  Stmt& bind(int index, std::string_view v);
  Stmt& bind(int index, const char* v) { return bind(index, std::string_view(v)); }
  Stmt& bind(int index, const std::string& v) { return bind(index, std::string_view(v)); }
  Stmt& bind_null(int index);
  /// Binds an optional: empty -> NULL.
  template <typename T>
  Stmt& bind(int index, const std::optional<T>& v) {
    return v ? bind(index, *v) : bind_null(index);
  }
  Stmt& bind(int index, const Value& v);
  /// Binds `vs` to parameters 1, 2, ... in order (any type bind() takes; an empty optional
  /// -> NULL). Parameters after the last value are left as they are (NULL after run() or
  /// reset()); bind them with bind(index, v). Throws DbError as bind() does.
  template <typename... Ts>
  Stmt& bind_all(const Ts&... vs) {
    int index = 1;
    (bind(index++, vs), ...);
    return *this;
  }

  /// Steps once. True when a row is available, false when done. Throws on error.
  bool step();
  /// Steps until done (for INSERT/UPDATE), then resets for reuse.
  void run();
  void reset();

  int columns() const;
  bool is_null(int col) const;
  std::int64_t int64(int col) const;
  double real(int col) const;
  std::string text(int col) const;
  std::optional<std::int64_t> opt_int64(int col) const;
  std::optional<double> opt_real(int col) const;
  std::optional<std::string> opt_text(int col) const;
  Value value(int col) const;
  std::string column_name(int col) const;

 private:
  Db& db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

/// An open SQLite database file.
class Db {
 public:
  enum class Mode { ReadOnly, ReadWrite, Create };
  /// Opens `path`. Create: creates the file if needed (16 KiB pages) and applies the results schema;
  /// ReadWrite: the file must exist (schema applied if missing tables).
  /// Either of those brings a file of an earlier schema version to this one (schema.sql), once,
  /// in one transaction (a conversion stopped part-way leaves the file at its former version,
  /// and the next open converts it again); ReadOnly never writes and reads such a file as it
  /// is. WAL journal and a 10 s busy timeout for writers.
  Db(const std::string& path, Mode mode);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  /// Runs one or more statements without results.
  void exec(std::string_view sql);
  /// Runs `fn` inside BEGIN IMMEDIATE ... COMMIT; rolls back and rethrows on exception.
  /// Write transactions of one process on one database file (every Db opened on that path)
  /// take turns on a process-wide lock first, so this process's writers queue on a mutex
  /// instead of polling SQLite's lock: with many runner workers (50 hosts, fleet_bench) the
  /// busy handler's polling let one writer starve past the busy timeout ("database is
  /// locked") while the others wrote. Writers in other processes still meet the busy
  /// timeout (10 s).
  template <typename Fn>
  void transaction(Fn&& fn) {
    std::lock_guard<std::recursive_mutex> turn(*write_turn_);
    exec("BEGIN IMMEDIATE");
    try {
      fn();
    } catch (...) {
      exec("ROLLBACK");
      throw;
    }
    exec("COMMIT");
  }
  std::int64_t last_insert_rowid() const;
  const std::string& path() const { return path_; }
  sqlite3* handle() { return db_; }

 private:
  /// The constructor's work after the file is open: pragmas, schema and its conversion (a
  /// writer), or the check that it is a results database (ReadOnly). Throws DbError.
  void set_up(Mode mode);
  sqlite3* db_ = nullptr;
  std::string path_;
  std::shared_ptr<std::recursive_mutex> write_turn_;  ///< shared by every Db of this process on the same file
  friend class Stmt;
};

/// The per-case tables stored under cases.case_key since schema version 5 (schema.sql): their
/// rows are in the table <name>_rows (case_key, no case_id), read and written through the view
/// <name> (case_id, the columns of version 4).
inline constexpr const char* kCaseKeyedTables[] = {"canary_requests", "telemetry", "controller_events"};

/// Called inside the transaction that converts a file of an earlier schema version to this one
/// (results/db.cpp convert), after each step: "renamed" (the former cases renamed and
/// schema.sql applied), "copied" (rows copied, former tables dropped), "filled" (arms filled;
/// the version is raised and the transaction commits next). No shipped program sets one
/// (nullptr: nothing is called); it is the seam through which tests/unit/results/arms_test.cpp
/// kills or fails a conversion part-way, to prove that the file is left as it was. Not
/// thread-safe: set it before any Db is opened.
using ConversionObserver = void (*)(Db& db, const char* step);
/// Installs `observer` (nullptr removes it).
void set_conversion_observer(ConversionObserver observer);

/// The text of results/schema.sql (compiled in).
std::string_view schema_sql();

/// The column names of table or view `table` in the attached schema `schema` ("main", or an
/// ATTACH name) of `db`, in declaration order (PRAGMA table_info); empty when it has none.
/// Throws DbError (no such schema).
std::vector<std::string> table_columns(Db& db, const std::string& schema, const std::string& table);

/// True when `table` is a table (not a view) of the main schema of `db`. The one test of
/// table presence: the readers of older DBs (a version-1 DB has no campaign_meta, a
/// version-5 one no arms) and the checks that a file is a harness DB go through it.
/// Throws DbError (SQLite failure).
bool has_table(Db& db, const std::string& table);

/// True when table or view `table` of `db` has a column named `column` (PRAGMA table_info,
/// which looks in main first; false when there is no such table). A DB written before a schema
/// version lacks that version's columns (schema.sql): the analysis reads them only when
/// present and reports "not measured" otherwise, never zero. Throws DbError.
bool has_column(Db& db, const std::string& table, const std::string& column);

/// Copies every row of case `case_id` from the bundle file into `campaign` in one
/// transaction, replacing rows of an earlier attempt of the same case. When the bundle holds
/// the case under another id (`bundle_case_id`, not empty: the id an attempt was submitted to
/// the agent under), its rows are read under that id and written under `case_id`; the bundle
/// file is never modified. Returns the number of canary_requests rows imported. Throws
/// DbError (bundle unreadable, case missing from the bundle). `in_transaction`, when given,
/// runs inside the same transaction after the rows are copied (the campaign runner updates
/// schedule.state and its attempts row there, so a crash never leaves one without the other).
/// Foreign keys are not enforced during that transaction (`in_transaction` included): the
/// copied rows reference their case by construction; enforcement is restored afterwards.
std::int64_t import_bundle(Db& campaign, const std::string& bundle_path, const std::string& case_id,
                           const std::function<void(Db&)>& in_transaction = {},
                           const std::string& bundle_case_id = {});

}  // namespace results
