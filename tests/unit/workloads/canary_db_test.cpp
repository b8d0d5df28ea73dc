// canary-sqlite database: row count, payload size, index present and used, contents
// identical for the same seed, and clear errors for missing or corrupt databases.
// Checks read the file with SQLite directly, not through the code under test.
#include "canaries/canary_db.hpp"

#include <sqlite3.h>
#include <unistd.h>

#include <boost/random/mersenne_twister.hpp>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

namespace fs = std::filesystem;
using canaries::CanaryDb;
using canaries::CanaryDbError;

namespace {

class Sql {
 public:
  explicit Sql(const fs::path& p) {
    if (sqlite3_open_v2(p.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) throw std::runtime_error("open");
  }
  ~Sql() { sqlite3_close(db_); }
  std::int64_t int_query(const std::string& q) {
    sqlite3_stmt* s = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, q.c_str(), -1, &s, nullptr), SQLITE_OK) << q;
    EXPECT_EQ(sqlite3_step(s), SQLITE_ROW) << q;
    const std::int64_t v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
  }
  std::string text_rows(const std::string& q) {
    sqlite3_stmt* s = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, q.c_str(), -1, &s, nullptr), SQLITE_OK) << q;
    std::string out;
    while (sqlite3_step(s) == SQLITE_ROW) {
      for (int c = 0; c < sqlite3_column_count(s); ++c) {
        const auto* t = sqlite3_column_text(s, c);
        out += t ? reinterpret_cast<const char*>(t) : "NULL";
        out += '|';
      }
      out += '\n';
    }
    sqlite3_finalize(s);
    return out;
  }
  /// FNV-1a over (id, lookup_key, payload) of every row in id order, plus the meta rows.
  std::uint64_t digest() {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    auto mix = [&](const void* p, std::size_t n) {
      for (std::size_t i = 0; i < n; ++i) h = (h ^ static_cast<const unsigned char*>(p)[i]) * 0x100000001b3ULL;
    };
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db_, "SELECT id, lookup_key, payload FROM rows ORDER BY id", -1, &s, nullptr);
    while (sqlite3_step(s) == SQLITE_ROW) {
      const std::int64_t id = sqlite3_column_int64(s, 0), k = sqlite3_column_int64(s, 1);
      mix(&id, 8);
      mix(&k, 8);
      mix(sqlite3_column_blob(s, 2), static_cast<std::size_t>(sqlite3_column_bytes(s, 2)));
    }
    sqlite3_finalize(s);
    const std::string meta = text_rows("SELECT key, value FROM canary_meta ORDER BY key");
    mix(meta.data(), meta.size());
    return h;
  }
  void exec(const std::string& q) { ASSERT_EQ(sqlite3_exec(db_, q.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << q; }

 private:
  sqlite3* db_ = nullptr;
};

class CanaryDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("hk-canarydb-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path make(const std::string& name, std::int64_t rows, std::uint64_t seed, std::int64_t payload = 1536) {
    const fs::path p = dir_ / name;
    canaries::prepare_database({p.string(), rows, payload, seed});
    return p;
  }
  std::string open_error(const fs::path& p) {
    try {
      CanaryDb db(p.string());
    } catch (const CanaryDbError& e) {
      return e.what();
    }
    return "<no error>";
  }
  fs::path dir_;
};

}  // namespace

TEST_F(CanaryDbTest, StudyDatabaseHasRowsPayloadsAndIndex) {
  const fs::path p = make("study.db", 80'000, 7);  // study: 80,000 rows x 1,536 bytes
  EXPECT_FALSE(fs::exists(p.string() + ".tmp"));
  Sql sql(p);
  EXPECT_EQ(sql.int_query("SELECT count(*) FROM rows"), 80'000);
  EXPECT_EQ(sql.int_query("SELECT min(length(payload)) FROM rows"), 1536);
  EXPECT_EQ(sql.int_query("SELECT max(length(payload)) FROM rows"), 1536);
  EXPECT_EQ(sql.int_query("SELECT count(DISTINCT lookup_key) FROM rows"), 80'000);
  EXPECT_EQ(sql.int_query("SELECT count(*) FROM sqlite_master WHERE type='index' AND name='rows_lookup_key' "
                          "AND tbl_name='rows' AND sql LIKE '%UNIQUE%lookup_key%'"),
            1);
  const std::string plan = sql.text_rows("EXPLAIN QUERY PLAN SELECT payload FROM rows WHERE lookup_key = 42");
  EXPECT_NE(plan.find("USING INDEX rows_lookup_key"), std::string::npos) << plan;
  EXPECT_EQ(sql.int_query("PRAGMA page_size"), 4096);

  CanaryDb db(p.string());
  EXPECT_EQ(db.rows(), 80'000);
  EXPECT_EQ(db.payload_bytes(), 1536);
  EXPECT_EQ(db.seed(), 7u);
  for (std::uint64_t r : {0ULL, 1ULL, 39'999ULL, 79'999ULL}) {
    EXPECT_TRUE(db.lookup(canaries::key_for_row(r, 7)).has_value()) << "row " << r;
  }
  EXPECT_EQ(sql.int_query("SELECT lookup_key FROM rows WHERE id = 1234"), canaries::key_for_row(1233, 7));
}

TEST_F(CanaryDbTest, ContentsIdenticalForSameSeedAndDifferentOtherwise) {
  const fs::path a = make("a.db", 3000, 11), b = make("b.db", 3000, 11), c = make("c.db", 3000, 12);
  Sql sa(a), sb(b), sc(c);
  const std::uint64_t da = sa.digest(), db = sb.digest(), dc = sc.digest();
  EXPECT_EQ(da, db);
  EXPECT_NE(da, dc);
  // The documented construction: row 1's payload starts with the first mt19937_64(seed)
  // output, little-endian.
  boost::random::mt19937_64 eng(11);
  const std::uint64_t w = eng();
  std::string hex;
  for (int i = 0; i < 8; ++i) {
    char buf[3];
    std::snprintf(buf, sizeof buf, "%02X", static_cast<unsigned>((w >> (8 * i)) & 0xff));
    hex += buf;
  }
  EXPECT_EQ(sa.text_rows("SELECT hex(substr(payload, 1, 8)) FROM rows WHERE id = 1"), hex + "|\n");
}

TEST_F(CanaryDbTest, LookupOfAbsentKeyIsNullopt) {
  const fs::path p = make("small.db", 100, 3, 64);
  CanaryDb db(p.string());
  std::set<std::int64_t> keys;
  for (std::uint64_t r = 0; r < 100; ++r) keys.insert(canaries::key_for_row(r, 3));
  std::int64_t absent = 0;
  while (keys.count(absent)) ++absent;
  EXPECT_FALSE(db.lookup(absent).has_value());
  EXPECT_TRUE(db.lookup(*keys.begin()).has_value());
}

TEST_F(CanaryDbTest, MissingDatabaseIsAClearError) {
  const std::string msg = open_error(dir_ / "nope.db");
  EXPECT_NE(msg.find("nope.db"), std::string::npos) << msg;
  EXPECT_NE(msg.find("prepare"), std::string::npos) << msg;
}

TEST_F(CanaryDbTest, GarbageFileIsAClearError) {
  const fs::path p = dir_ / "garbage.db";
  std::ofstream(p, std::ios::binary) << std::string(8192, '\x5a');
  const std::string msg = open_error(p);
  EXPECT_NE(msg.find("not a SQLite database"), std::string::npos) << msg;
}

TEST_F(CanaryDbTest, OtherSqliteFileIsNotACanaryDatabase) {
  const fs::path p = dir_ / "other.db";
  {
    sqlite3* db = nullptr;
    sqlite3_open(p.c_str(), &db);
    sqlite3_exec(db, "CREATE TABLE t(x)", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  EXPECT_NE(open_error(p).find("not a canary-sqlite database"), std::string::npos) << open_error(p);
}

TEST_F(CanaryDbTest, TruncatedOrIndexlessDatabaseIsRejected) {
  const fs::path p = make("t.db", 2000, 5);
  const fs::path half = dir_ / "half.db";
  {
    std::ifstream in(p, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    std::ofstream(half, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  const std::string msg = open_error(half);
  EXPECT_NE(msg.find("half.db"), std::string::npos) << msg;
  EXPECT_NE(msg, "<no error>");

  {
    Sql sql(p);
    sql.exec("DROP INDEX rows_lookup_key");
  }
  EXPECT_NE(open_error(p).find("rows_lookup_key is missing"), std::string::npos) << open_error(p);
}

TEST_F(CanaryDbTest, BadPrepareArgumentsNameTheFlag) {
  auto msg = [&](std::int64_t rows, std::int64_t payload) {
    try {
      canaries::prepare_database({(dir_ / "x.db").string(), rows, payload, 1});
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  EXPECT_NE(msg(0, 1536).find("--rows"), std::string::npos);
  EXPECT_NE(msg(10, 0).find("--payload-bytes"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "x.db"));
}

TEST(KeyForRow, UniqueAndSeedDependent) {
  std::set<std::int64_t> keys;
  for (std::uint64_t r = 0; r < 100'000; ++r) keys.insert(canaries::key_for_row(r, 1));
  EXPECT_EQ(keys.size(), 100'000u);
  EXPECT_NE(canaries::key_for_row(0, 1), canaries::key_for_row(0, 2));
}
