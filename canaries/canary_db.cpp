#include "canaries/canary_db.hpp"

#include "canaries/hot_region.hpp"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/random/mersenne_twister.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace canaries {
namespace {

constexpr const char* kFormat = "hk-canary-sqlite-1";

[[noreturn]] void fail(const std::string& path, sqlite3* db, const std::string& what) {
  std::string msg = "database " + path + ": " + what;
  if (db) {
    const int code = sqlite3_errcode(db);
    if (code == SQLITE_NOTADB) {
      msg += ": not a SQLite database (corrupt or wrong file)";
    } else if (code == SQLITE_CORRUPT) {
      msg += ": database file is corrupt (run `canary-sqlite prepare` again)";
    }
    msg += std::string(" [sqlite: ") + sqlite3_errmsg(db) + "]";
  }
  throw CanaryDbError(msg);
}

void exec(sqlite3* db, const std::string& path, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string e = err ? err : "?";
    sqlite3_free(err);
    fail(path, db, std::string("'") + sql + "' failed (" + e + ")");
  }
}

struct StmtGuard {
  sqlite3_stmt* s = nullptr;
  ~StmtGuard() { sqlite3_finalize(s); }
};

}  // namespace

std::int64_t key_for_row(std::uint64_t row, std::uint64_t seed) {
  const std::uint64_t salt = splitmix64_mix(seed ^ 0x6b65792d73636865ULL);
  return static_cast<std::int64_t>(splitmix64_mix(row ^ salt));
}

void prepare_database(const PrepareOptions& o) {
  if (o.path.empty()) throw std::invalid_argument("--db must name a file");
  if (o.rows < 1 || o.rows > 100'000'000) {
    throw std::invalid_argument("--rows " + std::to_string(o.rows) + " must be in [1, 100000000]");
  }
  if (o.payload_bytes < 1 || o.payload_bytes > 1'000'000) {
    throw std::invalid_argument("--payload-bytes " + std::to_string(o.payload_bytes) + " must be in [1, 1000000]");
  }
  const std::string tmp = o.path + ".tmp";
  ::unlink(tmp.c_str());
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(tmp.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    std::string msg = "database " + o.path + ": cannot create " + tmp + ": " + (db ? sqlite3_errmsg(db) : "out of memory");
    sqlite3_close(db);
    throw CanaryDbError(msg);
  }
  try {
    exec(db, o.path, "PRAGMA page_size=4096; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;");
    exec(db, o.path,
         "CREATE TABLE canary_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
         "CREATE TABLE rows(id INTEGER PRIMARY KEY, lookup_key INTEGER NOT NULL, payload BLOB NOT NULL);");
    exec(db, o.path, "BEGIN");
    {
      StmtGuard meta;
      if (sqlite3_prepare_v2(db, "INSERT INTO canary_meta(key, value) VALUES (?1, ?2)", -1, &meta.s, nullptr) !=
          SQLITE_OK)
        fail(o.path, db, "prepare meta insert");
      const std::pair<const char*, std::string> kv[] = {
          {"format", kFormat},
          {"rows", std::to_string(o.rows)},
          {"payload_bytes", std::to_string(o.payload_bytes)},
          {"seed", std::to_string(o.seed)},
          {"key_scheme", "splitmix64-v1"}};
      for (const auto& [k, v] : kv) {
        sqlite3_bind_text(meta.s, 1, k, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(meta.s, 2, v.c_str(), -1, SQLITE_TRANSIENT);
        if (sqlite3_step(meta.s) != SQLITE_DONE) fail(o.path, db, "insert meta");
        sqlite3_reset(meta.s);
      }
      StmtGuard ins;
      if (sqlite3_prepare_v2(db, "INSERT INTO rows(id, lookup_key, payload) VALUES (?1, ?2, ?3)", -1, &ins.s,
                             nullptr) != SQLITE_OK)
        fail(o.path, db, "prepare row insert");
      boost::random::mt19937_64 eng(o.seed);
      std::vector<unsigned char> payload(static_cast<std::size_t>(o.payload_bytes));
      for (std::int64_t r = 0; r < o.rows; ++r) {
        for (std::size_t i = 0; i < payload.size(); i += 8) {
          const std::uint64_t w = eng();
          for (std::size_t b = 0; b < 8 && i + b < payload.size(); ++b) {
            payload[i + b] = static_cast<unsigned char>(w >> (8 * b));
          }
        }
        sqlite3_bind_int64(ins.s, 1, r + 1);
        sqlite3_bind_int64(ins.s, 2, key_for_row(static_cast<std::uint64_t>(r), o.seed));
        sqlite3_bind_blob(ins.s, 3, payload.data(), static_cast<int>(payload.size()), SQLITE_STATIC);
        if (sqlite3_step(ins.s) != SQLITE_DONE) fail(o.path, db, "insert row " + std::to_string(r + 1));
        sqlite3_reset(ins.s);
      }
    }
    exec(db, o.path, "COMMIT");
    exec(db, o.path, "CREATE UNIQUE INDEX rows_lookup_key ON rows(lookup_key)");
  } catch (...) {
    sqlite3_close(db);
    ::unlink(tmp.c_str());
    throw;
  }
  if (sqlite3_close(db) != SQLITE_OK) throw CanaryDbError("database " + o.path + ": close failed");
  if (std::rename(tmp.c_str(), o.path.c_str()) != 0) {
    throw CanaryDbError("database " + o.path + ": rename from " + tmp + " failed: " + std::strerror(errno));
  }
}

CanaryDb::CanaryDb(const std::string& path) : path_(path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw CanaryDbError("database " + path + ": " + std::strerror(errno) + " (run `canary-sqlite prepare --db " +
                        path + "` first)");
  }
  if (!S_ISREG(st.st_mode)) throw CanaryDbError("database " + path + ": not a regular file");
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    std::string msg = "database " + path + ": cannot open: " + (db_ ? sqlite3_errmsg(db_) : "out of memory");
    sqlite3_close(db_);
    db_ = nullptr;
    throw CanaryDbError(msg);
  }
  try {
    exec(db_, path_, "PRAGMA query_only=1; PRAGMA cache_size=-2048; PRAGMA mmap_size=0; PRAGMA temp_store=MEMORY;");
    // Meta table: a garbage file fails here with SQLITE_NOTADB.
    {
      StmtGuard q;
      if (sqlite3_prepare_v2(db_, "SELECT key, value FROM canary_meta", -1, &q.s, nullptr) != SQLITE_OK) {
        if (sqlite3_errcode(db_) == SQLITE_ERROR) {
          throw CanaryDbError("database " + path_ + ": no canary_meta table: not a canary-sqlite database [sqlite: " +
                              sqlite3_errmsg(db_) + "]");
        }
        fail(path_, db_, "reading canary_meta");
      }
      std::string format;
      bool have_rows = false, have_payload = false, have_seed = false;
      int rc;
      while ((rc = sqlite3_step(q.s)) == SQLITE_ROW) {
        const std::string k = reinterpret_cast<const char*>(sqlite3_column_text(q.s, 0));
        const char* v = reinterpret_cast<const char*>(sqlite3_column_text(q.s, 1));
        const std::string val = v ? v : "";
        try {
          if (k == "format") format = val;
          if (k == "rows") rows_ = std::stoll(val), have_rows = true;
          if (k == "payload_bytes") payload_bytes_ = std::stoll(val), have_payload = true;
          if (k == "seed") seed_ = std::stoull(val), have_seed = true;
        } catch (const std::exception&) {
          throw CanaryDbError("database " + path_ + ": canary_meta '" + k + "' = '" + val + "' is not a number");
        }
      }
      if (rc != SQLITE_DONE) fail(path_, db_, "reading canary_meta");
      if (format != kFormat) {
        throw CanaryDbError("database " + path_ + ": canary_meta format '" + format + "', expected '" + kFormat + "'");
      }
      if (!have_rows || !have_payload || !have_seed || rows_ < 1 || payload_bytes_ < 1) {
        throw CanaryDbError("database " + path_ + ": canary_meta lacks valid rows/payload_bytes/seed");
      }
    }
    {
      StmtGuard q;
      if (sqlite3_prepare_v2(db_, "SELECT count(*) FROM sqlite_master WHERE type='index' AND name='rows_lookup_key'",
                             -1, &q.s, nullptr) != SQLITE_OK ||
          sqlite3_step(q.s) != SQLITE_ROW)
        fail(path_, db_, "reading sqlite_master");
      if (sqlite3_column_int64(q.s, 0) != 1) {
        throw CanaryDbError("database " + path_ + ": index rows_lookup_key is missing (prepare the database again)");
      }
    }
    {
      StmtGuard q;
      if (sqlite3_prepare_v2(db_, "SELECT max(id) FROM rows", -1, &q.s, nullptr) != SQLITE_OK ||
          sqlite3_step(q.s) != SQLITE_ROW)
        fail(path_, db_, "reading the rows table");
      const std::int64_t max_id = sqlite3_column_int64(q.s, 0);
      if (max_id != rows_) {
        throw CanaryDbError("database " + path_ + ": rows table ends at id " + std::to_string(max_id) +
                            ", canary_meta says " + std::to_string(rows_) + " rows (incomplete or corrupt)");
      }
    }
    if (sqlite3_prepare_v3(db_, "SELECT payload FROM rows WHERE lookup_key = ?1", -1, SQLITE_PREPARE_PERSISTENT,
                           &query_, nullptr) != SQLITE_OK)
      fail(path_, db_, "preparing the point query");
  } catch (...) {
    sqlite3_finalize(query_);
    sqlite3_close(db_);
    throw;
  }
}

CanaryDb::~CanaryDb() {
  sqlite3_finalize(query_);
  sqlite3_close(db_);
}

std::optional<std::uint64_t> CanaryDb::lookup(std::int64_t key) {
  sqlite3_reset(query_);
  sqlite3_bind_int64(query_, 1, key);
  const int rc = sqlite3_step(query_);
  if (rc == SQLITE_DONE) return std::nullopt;
  if (rc != SQLITE_ROW) fail(path_, db_, "point query for key " + std::to_string(key));
  const auto* p = static_cast<const unsigned char*>(sqlite3_column_blob(query_, 0));
  const int n = sqlite3_column_bytes(query_, 0);
  if (n != payload_bytes_) {
    throw CanaryDbError("database " + path_ + ": key " + std::to_string(key) + " has a payload of " +
                        std::to_string(n) + " bytes, expected " + std::to_string(payload_bytes_) + " (corrupt)");
  }
  std::uint64_t sum = 0;
  for (int i = 0; i < n; ++i) sum += p[i];
  sqlite3_reset(query_);
  return sum;
}

}  // namespace canaries
