// The agent's default executor (harness/agent/cases/executor_command.hpp): harness-case beside the
// agent's binary when it is an executable file, the full CLI otherwise, with the reason.
#include "harness/agent/cases/executor_command.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using harness::agent::default_executor;

namespace {

struct BinDir {
  fs::path dir;
  BinDir() {
    char tmpl[] = "/tmp/executor-command-XXXXXX";
    dir = ::mkdtemp(tmpl);
    write("harness", fs::perms::owner_all);
  }
  ~BinDir() { fs::remove_all(dir); }
  std::string self() const { return (dir / "harness").string(); }
  void write(const std::string& name, fs::perms mode) const {
    std::ofstream(dir / name) << "#!/bin/sh\n";
    fs::permissions(dir / name, mode);
  }
};

}  // namespace

TEST(DefaultExecutor, PrefersHarnessCaseBesideTheAgent) {
  BinDir b;
  b.write("harness-case", fs::perms::owner_all);
  const auto c = default_executor(b.self());
  const std::vector<std::string> want = {(b.dir / "harness-case").string(), "case", "run"};
  EXPECT_EQ(c.argv, want);
  EXPECT_EQ(c.why, "executor " + (b.dir / "harness-case").string() + " case run");
}

TEST(DefaultExecutor, FallsBackToTheFullCliNamingTheMissingFile) {
  BinDir b;
  const auto c = default_executor(b.self());
  const std::vector<std::string> want = {b.self(), "case", "run"};
  EXPECT_EQ(c.argv, want);
  EXPECT_NE(c.why.find("no executable " + (b.dir / "harness-case").string()), std::string::npos) << c.why;
}

TEST(DefaultExecutor, IgnoresAHarnessCaseThatCannotRun) {
  BinDir b;
  b.write("harness-case", fs::perms::owner_read | fs::perms::owner_write);  // no execute bit
  EXPECT_EQ(default_executor(b.self()).argv.front(), b.self());
  BinDir d;
  fs::create_directory(d.dir / "harness-case");  // a directory, not a file
  EXPECT_EQ(default_executor(d.self()).argv.front(), d.self());
}
