// The agent's qualification (harness/agent/routes/qualification.hpp) with a --qualify-cmd the test
// writes, and the busy slot it shares with cases.
#include "harness/agent/routes/qualification.hpp"
#include "tests/common/temp_dir.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

namespace {
using namespace harness::agent;
using nlohmann::json;

std::string script(const test_support::TempDir& tmp, const std::string& name, const std::string& text) {
  const std::string p = tmp / name;
  { std::ofstream(p) << "#!/bin/sh\n" << text; }
  ::chmod(p.c_str(), 0755);
  return p;
}

TEST(Qualification, CommandReportIsTakenAsPrinted) {
  test_support::TempDir tmp("qualification");
  AgentOptions o;
  o.qualify_cmd = script(tmp, "ok.sh", "echo '{\"passed\":true,\"checks\":[]}'\n");
  const json r = run_qualification(o, nullptr, {});
  EXPECT_TRUE(qualification_passed(r)) << r.dump();
}

TEST(Qualification, CommandWithoutAJsonReportFailsNamingIt) {
  test_support::TempDir tmp("qualification");
  AgentOptions o;
  o.qualify_cmd = script(tmp, "bad.sh", "echo hello; exit 4\n");
  const json r = run_qualification(o, nullptr, {});
  EXPECT_FALSE(qualification_passed(r));
  const std::string reason = reasons_of(r)[0];
  EXPECT_NE(reason.find("qualification command '" + o.qualify_cmd + "' exited 4 without a JSON report"),
            std::string::npos)
      << reason;
}

// A command that cannot be started (the agent's one start, child.cpp, reports exec's errno):
// a failed report that names the command and why, not an exit code 127 or an exception.
TEST(Qualification, CommandThatCannotStartFailsNamingIt) {
  test_support::TempDir tmp("qualification");
  AgentOptions o;
  o.qualify_cmd = tmp / "no-such-command";
  const json r = run_qualification(o, nullptr, {});
  EXPECT_FALSE(qualification_passed(r));
  const std::string reason = reasons_of(r)[0];
  EXPECT_NE(reason.find("qualification command '" + o.qualify_cmd + "' could not be run"), std::string::npos)
      << reason;
  EXPECT_NE(reason.find("No such file or directory"), std::string::npos) << reason;
}

TEST(Qualification, ReasonsComeFromTheReportOrItsFailedRequiredChecks) {
  EXPECT_EQ(reasons_of(json{{"passed", false}, {"reasons", {"r1"}}}), json::array({"r1"}));
  const json checks{{"passed", false},
                    {"checks",
                     {{{"name", "memory_reclaim"}, {"passed", false}, {"found", "missing"}},
                      {{"name", "optional"}, {"passed", false}, {"required", false}, {"found", "no"}},
                      {{"name", "swap"}, {"passed", true}}}}};
  EXPECT_EQ(reasons_of(checks), json::array({"memory_reclaim: missing"}));
  EXPECT_EQ(reasons_of(json{{"passed", false}}), json::array({"qualification report says passed=false"}));
}

TEST(Qualification, WhileTheSlotIsHeldTheLastReportIsServedStaleOr409) {
  test_support::TempDir tmp("qualification");
  Registry reg(tmp.path());
  AgentOptions o;
  o.qualify_cmd = script(tmp, "ok.sh", "echo '{\"passed\":true,\"checks\":[]}'\n");
  reg.busy = Busy{Busy::Holder::Case, "c", -1};
  httplib::Response none;
  serve_qualification(reg, o, none);
  EXPECT_EQ(none.status, 409);
  EXPECT_NE(none.body.find("busy: case c is running; no earlier report"), std::string::npos) << none.body;
  reg.busy = Busy{};
  httplib::Response fresh;
  serve_qualification(reg, o, fresh);
  EXPECT_EQ(json::parse(fresh.body)["passed"], true);
  EXPECT_TRUE(reg.busy.idle()) << "the qualification's slot is freed";
  reg.busy = Busy{Busy::Holder::Reboot, "", -1};
  httplib::Response stale;
  serve_qualification(reg, o, stale);
  EXPECT_EQ(json::parse(stale.body)["stale_while_busy"], true);
}

}  // namespace
