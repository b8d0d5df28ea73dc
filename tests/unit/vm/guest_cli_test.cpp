// The guest's `harness` in an image built without --with-cli (harness/vm/image.hpp
// guest_cli_script): run by /bin/sh with stand-ins for harness-case and harness-agent on PATH,
// it passes `case` to harness-case and `agent` and `qualify` to harness-agent with every
// argument unchanged, and refuses anything else with exit 64 naming --with-cli.
#include "harness/vm/image.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/common/temp_dir.hpp"

namespace fs = std::filesystem;
using ::testing::HasSubstr;

namespace {

struct Ran {
  int code = -1;
  std::string out;  ///< stdout and stderr
};

class GuestCli : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* role : {"harness-case", "harness-agent"}) {
      const std::string p = dir_ / role;
      std::ofstream(p) << "#!/bin/sh\necho \"" << role << " got: $*\"\n";
      fs::permissions(p, fs::perms(0755));
    }
    std::ofstream(dir_ / "harness") << harness::vm::guest_cli_script();
    fs::permissions(dir_ / "harness", fs::perms(0755));
  }
  Ran run(const std::string& args) {
    const std::string cmd = "PATH=" + dir_.path() + ":/usr/bin:/bin " + dir_ / "harness" + " " + args + " 2>&1";
    Ran r;
    FILE* p = ::popen(cmd.c_str(), "r");
    char buf[512];
    while (p && std::fgets(buf, sizeof buf, p)) r.out += buf;
    const int st = p ? ::pclose(p) : -1;
    r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
  }
  test_support::TempDir dir_{"guest-cli"};
};

TEST_F(GuestCli, CaseGoesToHarnessCaseWithEveryArgument) {
  const Ran r = run("case run --spec /out/a.json --out /out/bundles");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, "harness-case got: case run --spec /out/a.json --out /out/bundles\n");
}

TEST_F(GuestCli, AgentAndQualifyGoToHarnessAgent) {
  Ran r = run("qualify --json --no-reclaim-probe");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, "harness-agent got: qualify --json --no-reclaim-probe\n");
  r = run("agent --port 8080");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, "harness-agent got: agent --port 8080\n");
}

TEST_F(GuestCli, AnyOtherSubcommandExits64NamingWithCli) {
  for (const std::string args : {"run c.yaml c.db", "analyze c.db", ""}) {
    const Ran r = run(args);
    EXPECT_EQ(r.code, 64) << args << ": " << r.out;
    EXPECT_THAT(r.out, HasSubstr("--with-cli")) << args;
    EXPECT_THAT(r.out, ::testing::Not(HasSubstr("got:"))) << args;
  }
}

}  // namespace
