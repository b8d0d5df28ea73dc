// `harness check tests/vm/check/ci-triplet.yaml DB --junit F` on a local qemu guest, then the
// same command again on the same paths (issue 19: CI never passes on stale data):
//   1st: a fresh DB, 3 attempts (one matched triplet), JUnit whose test cases carry the
//        guest kernel, accelerator, case source commit, case times and measured values;
//   2nd: refused (exit 2), no new attempt, no JUnit written;
//   3rd: with --reuse: resumes (0 new attempts) and judges the same cases the same way.
// (A new DB per invocation when no DB is named: tests/unit/check/check_fresh_test.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "results/db.hpp"
#include "tests/common/guest_exec.hpp"

using ::testing::HasSubstr;

namespace {
using test_support::slurp;
std::int64_t attempts(const std::string& db_path) {
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  results::Stmt q(db, "SELECT count(*) FROM attempts");
  q.step();
  return q.int64(0);
}
std::string cases_text(const std::string& db_path, const std::string& sql) {
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  results::Stmt q(db, sql);
  return q.step() && !q.is_null(0) ? q.text(0) : "";
}
}  // namespace

TEST(CheckVm, SecondRunOnTheSamePathsNeverJudgesTheOldDataUnasked) {
  const std::string src = HARNESS_SOURCE_DIR, bin = HARNESS_BINARY_DIR;
  const std::string harness = bin + "/harness/cli/harness";
  char tmpl[] = "/tmp/check-vm-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string db = dir + "/ci.db", xml = dir + "/ci-junit.xml", log = dir + "/check.log";
  const std::string env = "XDG_CACHE_HOME=" + bin + "/cli-vm-xdg ";
  auto check = [&](const std::string& extra) {
    std::filesystem::remove(xml);
    const std::string cmd = env + harness + " check " + src + "/tests/vm/check/ci-triplet.yaml " + db + " --junit " + xml +
                            " --plain " + extra + " >> " + log + " 2>&1";
    const int st = std::system(cmd.c_str());
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  };
  ASSERT_EQ(std::system((env + harness + " vm image > " + log + " 2>&1").c_str()), 0) << slurp(log);

  const int first = check("");
  ASSERT_TRUE(first == 0 || first == 1) << slurp(log);  // 1 = an assertion failed: still judged fresh data
  EXPECT_EQ(attempts(db), 3) << slurp(log);
  const std::string junit1 = slurp(xml);
  const std::string kernel = cases_text(db, "SELECT min(kernel_release) FROM cases");
  const std::string accel = cases_text(db, "SELECT min(accelerator) FROM cases");
  const std::string commit = cases_text(db, "SELECT min(source_commit) FROM cases");
  ASSERT_FALSE(kernel.empty());
  EXPECT_THAT(junit1, HasSubstr("<property name=\"kernel\" value=\"" + kernel + "\"/>"));
  EXPECT_THAT(junit1, HasSubstr("<property name=\"accelerator\" value=\"" + accel + "\"/>"));
  if (!commit.empty()) EXPECT_THAT(junit1, HasSubstr("<property name=\"source_commit\" value=\"" + commit));
  EXPECT_THAT(junit1, HasSubstr("<property name=\"first_case_started_utc\" value=\"20"));
  EXPECT_THAT(junit1, HasSubstr("<property name=\"last_case_ended_utc\" value=\"20"));
  EXPECT_THAT(junit1, HasSubstr("<property name=\"harness_commit\""));
  EXPECT_THAT(junit1, HasSubstr(".achieved_ratio\" value=\""));    // measured, with its unit
  EXPECT_THAT(junit1, HasSubstr(".trigger_after_s\" value=\""));
  EXPECT_THAT(junit1, HasSubstr(" ratio\"/>"));
  EXPECT_THAT(junit1, HasSubstr("memory.reclaim write took "));

  const int second = check("");
  EXPECT_EQ(second, 2) << slurp(log);
  EXPECT_THAT(slurp(log), HasSubstr(db + " already holds an earlier run (3 attempt(s), 3 case(s))"));
  EXPECT_EQ(attempts(db), 3) << "the refused run made an attempt";
  EXPECT_FALSE(std::filesystem::exists(xml)) << "a refused run wrote JUnit";

  const int third = check("--reuse");
  EXPECT_EQ(third, first) << slurp(log);
  EXPECT_THAT(slurp(log), HasSubstr("0 attempt(s) in this run"));
  EXPECT_EQ(attempts(db), 3);
  EXPECT_THAT(slurp(xml), HasSubstr("<property name=\"kernel\" value=\"" + kernel + "\"/>"));
  std::filesystem::remove_all(dir);
}
