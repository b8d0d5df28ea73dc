// The README's pilot path on a local qemu guest: `CAMPAIGN=tests/vm/pilot/pilot-short.yaml
// OUT=DIR harness/scripts/main.sh` (SKIP_BUILD=1: this build tree) plans, runs the one
// pilot case and ends with Table 3 and the chosen dose (or "No eligible dose", exit 1), never
// running `analyze` on the pilot DB. Under TCG, Table 3 is accompanied by the plain statement
// that the duration criterion is meaningless, in the markdown and in report.json. When a dose
// is chosen, a confirmatory plan takes it from the pilot DB (design.dose_mib {from_pilot}).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "results/db.hpp"
#include "tests/common/guest_exec.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace {
using test_support::slurp;
}  // namespace

TEST(PilotPath, MainShEndsWithTable3AndTheChosenDose) {
  const std::string src = HARNESS_SOURCE_DIR, bin = HARNESS_BINARY_DIR;
  char tmpl[] = "/tmp/pilot-path-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string out = dir + "/out", log = dir + "/main.log";
  // A private image cache under the build tree (this build's binaries), as the smoke test.
  const std::string cmd = "cd " + dir + " && SKIP_BUILD=1 BUILD_DIR=" + bin + " XDG_CACHE_HOME=" + bin +
                          "/cli-vm-xdg CAMPAIGN=" + src + "/tests/vm/pilot/pilot-short.yaml OUT=" + out + " bash " +
                          src + "/harness/scripts/main.sh > " + log + " 2>&1";
  const int st = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(st));
  const int rc = WEXITSTATUS(st);
  const std::string text = slurp(log);
  ASSERT_TRUE(rc == 0 || rc == 1) << "main.sh exit " << rc << "; see " << log << "\n" << text;
  EXPECT_THAT(text, HasSubstr("design pilot"));
  EXPECT_THAT(text, HasSubstr("== pilot dose selection"));
  EXPECT_THAT(text, Not(HasSubstr("== analysis"))) << "analyze must not run on a pilot DB";
  EXPECT_THAT(text, HasSubstr("Table 3. Pilot doses"));
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(\|\s*16(\.0+)?\s*\|\s*1\s*\|\s*1 of 1\s*\|)"))) << text;

  results::Db db(out + "/campaign.db", results::Db::Mode::ReadOnly);
  results::Stmt q(db, "SELECT count(*), min(accelerator), max(dose_bytes) FROM cases WHERE status = 'completed'");
  ASSERT_TRUE(q.step());
  ASSERT_EQ(q.int64(0), 1) << "the pilot case did not complete; see " << log;
  const std::string accel = q.text(1);
  EXPECT_EQ(q.int64(2), 16ll << 20);

  const auto report = nlohmann::json::parse(slurp(out + "/pilot-select/report.json"));
  const auto& dc = report.at("extra").at("duration_criterion");
  if (accel == "tcg") {
    EXPECT_THAT(text, HasSubstr("Duration criterion meaningless: accelerator TCG"));
    EXPECT_THAT(text, HasSubstr("timing claims are invalid"));
    EXPECT_FALSE(dc.at("valid").get<bool>());
    EXPECT_THAT(dc.at("statement").get<std::string>(), HasSubstr("accelerator TCG"));
  } else {
    EXPECT_TRUE(dc.at("valid").get<bool>());
    EXPECT_THAT(text, Not(HasSubstr("Duration criterion meaningless")));
  }
  if (rc == 0) {
    EXPECT_THAT(text, HasSubstr("**Chosen dose: 16 MiB**"));
    EXPECT_EQ(report.at("extra").at("chosen_bytes").get<std::int64_t>(), 16ll << 20);
    EXPECT_THAT(text, HasSubstr("dose_mib: {from_pilot: " + out + "/campaign.db}"));
    // The dose flows into a confirmatory plan through the pilot DB, not by hand.
    std::string y = slurp(src + "/campaigns/smoke.yaml");
    y = std::regex_replace(y, std::regex(R"(dose_mib: 96)"), "dose_mib: {from_pilot: " + out + "/campaign.db}");
    std::ofstream(dir + "/confirm.yaml") << y;
    const int p = std::system(("build=" + bin + "; $build/harness/cli/harness plan " + dir + "/confirm.yaml > " + dir +
                               "/plan.log 2>&1").c_str());
    EXPECT_EQ(p, 0) << slurp(dir + "/plan.log");
    EXPECT_THAT(slurp(dir + "/plan.log"), HasSubstr("dose 16 MiB chosen by the pilot rule from " + out + "/campaign.db"));
  } else {
    EXPECT_THAT(text, HasSubstr("**No eligible dose**"));
    EXPECT_TRUE(report.at("extra").at("chosen_bytes").is_null());
  }
  std::filesystem::remove_all(dir);
}
