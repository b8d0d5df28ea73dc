// results::Stmt::bind_all: values go to parameters 1..N in order, empty optionals as NULL.
#include "results/db.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace {

using Row = std::vector<results::Value>;
const results::Value kNull{};

// A fresh results DB in the temp folder with one extra table `t(a, b, c, d, e)`.
struct TempDb {
  std::string path;
  results::Db db;
  explicit TempDb(const std::string& name)
      : path(fresh(name)), db(path, results::Db::Mode::Create) {
    db.exec("CREATE TABLE t(a INTEGER, b TEXT, c REAL, d INTEGER, e TEXT)");
  }
  ~TempDb() { std::filesystem::remove(path); }
  static std::string fresh(const std::string& name) {
    const auto p = std::filesystem::temp_directory_path() / ("hk_db_test_" + name + ".db");
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(p.string() + suffix);
    return p.string();
  }
  // Every row of t, ordered by a.
  std::vector<Row> rows() {
    results::Stmt q(db, "SELECT a, b, c, d, e FROM t ORDER BY a");
    std::vector<Row> out;
    while (q.step()) out.push_back({q.value(0), q.value(1), q.value(2), q.value(3), q.value(4)});
    return out;
  }
};

}  // namespace

TEST(StmtBindAll, BindsEachValueToItsParameterInOrder) {
  TempDb t("bind_all_order");
  {
    results::Stmt s(t.db, "INSERT INTO t(a, b, c, d, e) VALUES (?,?,?,?,?)");
    s.bind_all(std::int64_t{7}, std::string("seven"), 0.5, std::optional<std::int64_t>(), std::optional<std::string>("x"))
        .run();
    s.bind_all(1, "one", 1.5, std::optional<std::int64_t>(11), std::optional<std::string>()).run();
  }
  EXPECT_EQ(t.rows(), (std::vector<Row>{{std::int64_t{1}, std::string("one"), 1.5, std::int64_t{11}, kNull},
                                        {std::int64_t{7}, std::string("seven"), 0.5, kNull, std::string("x")}}));
}

TEST(StmtBindAll, LeavesLaterParametersToBindByIndex) {
  TempDb t("bind_all_later");
  {
    results::Stmt s(t.db, "INSERT INTO t(a, b, c) VALUES (?,?,?)");
    s.bind_all(1, "b").bind(3, 3.0).run();
    s.bind_all(4).run();  // run() cleared the earlier bindings: b and c are NULL
  }
  EXPECT_EQ(t.rows(), (std::vector<Row>{{std::int64_t{1}, std::string("b"), 3.0, kNull, kNull},
                                        {std::int64_t{4}, kNull, kNull, kNull, kNull}}));
}

TEST(StmtBindAll, MoreValuesThanParametersThrowsDbError) {
  TempDb t("bind_all_range");
  results::Stmt s(t.db, "INSERT INTO t(a) VALUES (?)");
  EXPECT_THROW(s.bind_all(1, 2), results::DbError);
}
