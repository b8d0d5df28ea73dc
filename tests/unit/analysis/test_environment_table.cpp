// Table 1's environment rows (analysis/tables/environment_table.hpp): a setting's value from
// environment_json, else what qualification recorded; one value, "N of M cases recorded it",
// "varies: ..." or "not recorded"; the runner's columns and the SQLite canary's artifact.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include "analysis/tables/environment_table.hpp"
#include "results/db.hpp"

namespace environment_table_test {
namespace {

/// Adds one case row (and its canary-sqlite.json artifact when `sqlite` is not empty); the
/// other arguments are SQL literals.
void add_case(results::Db& db, const std::string& id, const std::string& env, const std::string& qual,
              const std::string& host, const std::string& overcommitted, const std::string& sqlite = "") {
  db.exec("INSERT INTO cases(case_id, campaign, vm, regime, repeat, configuration, attempt, status, spec_json, "
          "environment_json, qualification_json, host_uri, overcommitted) VALUES ('" + id +
          "', 'c', 'vm0', 'r', 1, 'static-zram', 1, 'completed', '{}', " + env + ", " + qual + ", " + host + ", " +
          overcommitted + ")");
  if (!sqlite.empty())
    db.exec("INSERT INTO artifacts(case_id, name, content) VALUES ('" + id + "', 'canary-sqlite.json', '" + sqlite + "')");
}

}  // namespace

TEST(EnvironmentTable, EachSettingIsItsValueHowManyRecordedItOrWhatVaries) {
  const auto dir = std::filesystem::temp_directory_path() / ("hk_env_table_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "c.db").string();
  {
    results::Db db(path, results::Db::Mode::Create);
    add_case(db, "a", R"('{"kernel_release": "6.1.0", "mglru_enabled": "0x0007", "memtotal_kib": 1048576}')", "NULL",
             "'qemu:///system'", "1", R"({"rows": 80000})");
    // environment_json not JSON: qualification's recorded values stand in.
    add_case(db, "b", "'not json'",
             R"('{"passed": false, "recorded": {"kernel_release": "6.2", "mglru_enabled": "absent"}}')", "NULL", "0");
    add_case(db, "c", R"('{"kernel_release": "6.1.0"}')", R"('{"recorded": {"kernel_config": {"CONFIG_PSI": "y"}}}')",
             "NULL", "NULL");
  }
  const auto rows = analysis::environment_rows(path, {"a", "b", "c"});
  std::map<std::string, std::string> by_setting(rows.begin(), rows.end());
  ASSERT_EQ(rows.size(), 20u);
  EXPECT_EQ(rows.front().first, "hypervisor host (cases.host_uri)");
  EXPECT_EQ(rows.back().first, "SQLite canary point queries per request");
  EXPECT_EQ(by_setting["hypervisor host (cases.host_uri)"], "qemu:///system (1 of 3 cases recorded it)");
  EXPECT_EQ(by_setting["host overcommitted (cases.overcommitted)"],
            "varies: no (1 case); yes (provider.overcommit: true) (1 case)");
  EXPECT_EQ(by_setting["guest kernel release"], "varies: 6.1.0 (2 cases); 6.2 (1 case)");
  EXPECT_EQ(by_setting["MGLRU (/sys/kernel/mm/lru_gen/enabled)"],
            "varies: absent (kernel without MGLRU) (1 case); on (0x0007) (1 case)");
  EXPECT_EQ(by_setting["guest MemTotal (MiB)"], "1024.0 (1 of 3 cases recorded it)");
  EXPECT_EQ(by_setting["PSI (CONFIG_PSI / CONFIG_PSI_DEFAULT_DISABLED)"], "y / ? (1 of 3 cases recorded it)");
  EXPECT_EQ(by_setting["qualification (harness qualify at case start)"], "FAILED (1 of 3 cases recorded it)");
  EXPECT_EQ(by_setting["SQLite canary rows"], "80000 (1 of 3 cases recorded it)");
  EXPECT_EQ(by_setting["online CPUs"], "not recorded");
  // Every case recorded it: the value alone.
  EXPECT_EQ(analysis::environment_rows(path, {"a", "c"})[2].second, "6.1.0");
  std::filesystem::remove_all(dir);
}

}  // namespace environment_table_test
