#pragma once
// The SQLite canary's database (study: 80,000 rows with 1,536-byte payloads, indexed
// point queries, SQLite embedded in the canary process). Format "hk-canary-sqlite-1":
//
//   CREATE TABLE canary_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
//       -- format, rows, payload_bytes, seed, key_scheme
//   CREATE TABLE rows(id INTEGER PRIMARY KEY,          -- 1..rows
//                     lookup_key INTEGER NOT NULL,     -- key_for_row(id - 1, seed)
//                     payload BLOB NOT NULL);          -- payload_bytes bytes
//   CREATE UNIQUE INDEX rows_lookup_key ON rows(lookup_key);
//
// Contents are a function of (rows, payload_bytes, seed) only:
//   lookup_key of row r (0-based) = key_for_row(r, seed), a bijection of r (unique keys);
//   payloads: one boost::random::mt19937_64 seeded with `seed`, its 64-bit outputs laid
//   out little-endian, row after row (payload_bytes bytes per row; random, incompressible).
//
// PRAGMAs. prepare: page_size=4096, journal_mode=OFF, synchronous=OFF, all rows in one
// transaction, the index built after the rows; the file is built as FILE.tmp and renamed
// to FILE only when complete (an interrupted prepare never leaves a half database).
// run: opened read-only (SQLITE_OPEN_READONLY), query_only=1, cache_size=-2048 (2 MiB
// SQLite page cache, so most reads go through the OS page cache of the file, which the
// memory controller charges to the canary's cgroup and where pressure shows),
// mmap_size=0 (reads by pread, not a mapping), temp_store=MEMORY.
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace canaries {

/// Any database problem; what() names the file and what is wrong (missing, not a
/// SQLite file, not a canary database, corrupt, SQLite's message).
class CanaryDbError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parameters of `canary-sqlite prepare` (study defaults).
struct PrepareOptions {
  std::string path;
  std::int64_t rows = 80'000;
  std::int64_t payload_bytes = 1'536;
  std::uint64_t seed = 1;
};

/// Lookup key of 0-based row `row` (see file comment): splitmix64 finalizer of
/// row ^ splitmix64(seed ^ 0x6b65792d73636865), as a signed 64-bit integer. Unique per row.
std::int64_t key_for_row(std::uint64_t row, std::uint64_t seed);

/// Builds the database at opts.path (replacing an existing file). Throws
/// std::invalid_argument naming the flag (--rows in [1, 10^8], --payload-bytes in
/// [1, 1000000], --db empty) and CanaryDbError on SQLite/file errors.
void prepare_database(const PrepareOptions& opts);

/// A canary database opened for the run (read-only, PRAGMAs above), validated at open:
/// the file exists, is SQLite, has canary_meta with format hk-canary-sqlite-1, the
/// rows table with max(id) == rows and the index rows_lookup_key. Throws CanaryDbError.
class CanaryDb {
 public:
  explicit CanaryDb(const std::string& path);
  ~CanaryDb();
  CanaryDb(const CanaryDb&) = delete;
  CanaryDb& operator=(const CanaryDb&) = delete;

  std::int64_t rows() const { return rows_; }
  std::int64_t payload_bytes() const { return payload_bytes_; }
  std::uint64_t seed() const { return seed_; }

  /// One indexed point query: SELECT payload FROM rows WHERE lookup_key = ?.
  /// Returns a checksum of the payload (sum of its bytes), or nullopt when no row has
  /// the key. Throws CanaryDbError on a SQLite error or a payload of the wrong size.
  std::optional<std::uint64_t> lookup(std::int64_t key);

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* query_ = nullptr;
  std::int64_t rows_ = 0;
  std::int64_t payload_bytes_ = 0;
  std::uint64_t seed_ = 0;
};

}  // namespace canaries
