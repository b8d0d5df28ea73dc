// `harness check tests/vm/check/ci-triplet.yaml DB --junit F` on a local qemu guest (one
// matched triplet, a campaign built to pass), then judged again on the same DB:
//   1st: a fresh DB, 3 attempts: exit 0, every assertion a passing JUnit testcase (no
//        <failure>), whose properties carry the guest kernel, accelerator, case source commit,
//        case times and measured values;
//   2nd: refused (exit 2), no new attempt, no JUnit written (CI never passes on stale data);
//   3rd: with --reuse: resumes (0 new attempts) and judges the same cases the same way (exit 0);
//   4th: with --reuse and the same campaign plus an impossible bound (achieved >= 100 x the
//        request; assertions are not part of the plan, so the DB is the same run): exit 1, the
//        JUnit names that assertion as the one <failure> and the printout says FAIL for it.
// (A new DB per invocation when no DB is named: tests/unit/check/check_fresh_test.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "results/db.hpp"
#include "tests/common/guest_exec.hpp"
#include "tests/common/vm_downloads.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

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
std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size())) ++n;
  return n;
}
/// The <testcase ...>...</testcase> element of `junit` named `name` ("" when absent).
std::string testcase(const std::string& junit, const std::string& name) {
  const auto at = junit.find("name=\"" + name + "\"");
  if (at == std::string::npos) return "";
  const auto end = junit.find("</testcase>", at);
  return junit.substr(at, end == std::string::npos ? std::string::npos : end - at);
}
const char* kAssertions[] = {"all_cases_completed", "reclaim_achieved_ratio &gt;= 0.8", "trigger_within_s &lt;= 30",
                             "reclaim_duration_s &lt;= 10", "restoration_clean", "no_foreground_oom"};
}  // namespace

TEST(CheckVm, PassingCampaignIsGreenAnImpossibleBoundIsRedAndOldDataIsNeverJudgedUnasked) {
  const std::string src = HARNESS_SOURCE_DIR, bin = HARNESS_BINARY_DIR;
  const std::string harness = bin + "/harness/cli/harness";
  char tmpl[] = "/tmp/check-vm-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string db = dir + "/ci.db", xml = dir + "/ci-junit.xml", log = dir + "/check.log";
  const std::string passing = src + "/tests/vm/check/ci-triplet.yaml", failing = dir + "/ci-triplet-impossible.yaml";
  std::ofstream(failing) << slurp(passing) << "  - {kind: reclaim_achieved_ratio, min: 100}\n";
  const std::string env = "XDG_CACHE_HOME=" + bin + "/cli-vm-xdg ";
  test_support::share_vm_downloads(bin + "/cli-vm-xdg/reclaim-harness");
  auto check = [&](const std::string& file, const std::string& extra) {
    std::filesystem::remove(xml);
    std::ofstream(log, std::ios::app) << "\n== check " << file << " " << extra << "\n";
    const std::string cmd =
        env + harness + " check " + file + " " + db + " --junit " + xml + " --plain " + extra + " >> " + log + " 2>&1";
    const int st = std::system(cmd.c_str());
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  };
  ASSERT_EQ(std::system((env + harness + " vm image > " + log + " 2>&1").c_str()), 0) << slurp(log);

  // 1. Built to pass: exit 0 and not one <failure>.
  EXPECT_EQ(check(passing, ""), 0) << slurp(log);
  EXPECT_EQ(attempts(db), 3) << slurp(log);
  const std::string junit1 = slurp(xml);
  ASSERT_THAT(junit1, HasSubstr("<testsuite name=\"ci-regression\" tests=\"6\" failures=\"0\"")) << junit1;
  EXPECT_THAT(junit1, Not(HasSubstr("<failure"))) << junit1;
  EXPECT_EQ(occurrences(junit1, "<testcase "), 6u);
  for (const char* a : kAssertions) EXPECT_FALSE(testcase(junit1, a).empty()) << a << " missing:\n" << junit1;
  EXPECT_THAT(slurp(log), HasSubstr("0 of 6 assertion(s) failed"));
  const std::string kernel = cases_text(db, "SELECT min(kernel_release) FROM cases");
  const std::string accel = cases_text(db, "SELECT min(accelerator) FROM cases");
  const std::string commit = cases_text(db, "SELECT min(source_commit) FROM cases");
  ASSERT_FALSE(kernel.empty());
  ASSERT_EQ(commit.size(), 40u) << "the guest's build recorded no source commit";
  EXPECT_THAT(junit1, HasSubstr("<property name=\"kernel\" value=\"" + kernel + "\"/>"));
  EXPECT_THAT(junit1, HasSubstr("<property name=\"accelerator\" value=\"" + accel + "\"/>"));
  EXPECT_THAT(junit1, HasSubstr("<property name=\"source_commit\" value=\"" + commit));
  EXPECT_THAT(junit1, HasSubstr("<property name=\"first_case_started_utc\" value=\"20"));
  EXPECT_THAT(junit1, HasSubstr("<property name=\"last_case_ended_utc\" value=\"20"));
  EXPECT_THAT(junit1, HasSubstr("<property name=\"harness_commit\""));
  EXPECT_THAT(junit1, HasSubstr(".achieved_ratio\" value=\""));    // measured, with its unit
  EXPECT_THAT(junit1, HasSubstr(".trigger_after_s\" value=\""));
  EXPECT_THAT(junit1, HasSubstr(" ratio\"/>"));
  EXPECT_THAT(junit1, HasSubstr("memory.reclaim write took "));

  // 2. The same paths again: refused, nothing run, nothing written.
  EXPECT_EQ(check(passing, ""), 2) << slurp(log);
  EXPECT_THAT(slurp(log), HasSubstr(db + " already holds an earlier run (3 attempt(s), 3 case(s))"));
  EXPECT_EQ(attempts(db), 3) << "the refused run made an attempt";
  EXPECT_FALSE(std::filesystem::exists(xml)) << "a refused run wrote JUnit";

  // 3. --reuse: the same cases judged the same way.
  EXPECT_EQ(check(passing, "--reuse"), 0) << slurp(log);
  EXPECT_THAT(slurp(log), HasSubstr("0 attempt(s) in this run"));
  EXPECT_EQ(attempts(db), 3);
  EXPECT_THAT(slurp(xml), Not(HasSubstr("<failure")));
  EXPECT_THAT(slurp(xml), HasSubstr("<property name=\"kernel\" value=\"" + kernel + "\"/>"));

  // 4. Built to fail: the impossible bound is the one failed assertion, named.
  EXPECT_EQ(check(failing, "--reuse"), 1) << slurp(log);
  EXPECT_EQ(attempts(db), 3);
  const std::string junit4 = slurp(xml);
  EXPECT_THAT(junit4, HasSubstr("<testsuite name=\"ci-regression\" tests=\"7\" failures=\"1\"")) << junit4;
  EXPECT_EQ(occurrences(junit4, "<failure "), 1u) << junit4;
  const std::string bad = testcase(junit4, "reclaim_achieved_ratio &gt;= 100");
  EXPECT_THAT(bad, HasSubstr("<failure message=\"")) << junit4;
  EXPECT_THAT(bad, HasSubstr("(&gt;= 100 needed)")) << bad;
  for (const char* a : kAssertions) EXPECT_THAT(testcase(junit4, a), Not(HasSubstr("<failure"))) << a;
  // One summary line per assertion (issue 59): cases, failures, the measured range.
  EXPECT_TRUE(std::regex_search(slurp(log), std::regex(R"(FAIL  reclaim_achieved_ratio >= 100  \(1 case\(s\), 1 failed; achieved_ratio [0-9.]+\))")))
      << slurp(log);
  EXPECT_THAT(slurp(log), HasSubstr("1 of 7 assertion(s) failed"));
  if (!HasFailure()) std::filesystem::remove_all(dir);
}
