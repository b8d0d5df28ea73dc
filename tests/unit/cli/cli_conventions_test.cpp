// The `harness` executable's conventions, through the built binary (no guest needed):
//   - `harness --help` (and a subcommand's) ends with the exit-code table;
//   - a missing DB, a text file and a foreign SQLite file give exit 2 from every DB-taking
//     subcommand, with the file named and no SQL statement in the message;
//   - a usage error (unknown option, invalid value) gives 64 and names the option; invalid
//     values are refused, never replaced (--seed -1, -B 0, -B below the minimum);
//   - the DB is positional for plan/run/check with --db still accepted;
//   - the free-disk option has one name (--min-free-disk-mib UINT); the old spelling warns;
//   - pilot-select refuses a matched-triplet DB and analyze refuses a pilot DB (both 2);
//   - `harness case check` on a spec nested 100,000 deep refuses it (2) naming the limit;
//   - `harness export DB --format csv --out DIR`, as the docs write it, exits 0 and writes the
//     tables (it once crashed parsing --format: the option's storage did not outlive parsing).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "results/db.hpp"
#include "tests/common/fixed_pin.hpp"
#include "tests/common/run_harness.hpp"

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

const std::string kSource = HARNESS_SOURCE_DIR;
using Result = test_support::HarnessRun;

class Cli : public ::testing::Test {
 protected:
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("hk-cli-test-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  /// Runs `harness ARGS` (ARGS already shell-quoted) with stdout+stderr captured.
  Result harness(const std::string& args) { return test_support::run_harness(args, dir / "out.txt"); }

  std::string file(const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  }

  /// A copy of a repository campaign with `pinned_commit: build` fixed, so planning does
  /// not depend on whether this build is clean.
  std::string campaign(const std::string& name) {
    return file(name, test_support::with_fixed_pin(test_support::slurp(kSource + "/campaigns/" + name)));
  }
};

/// No SQL statement, whatever the error.
void expect_no_sql(const std::string& out) {
  for (const char* kw : {"SELECT ", "INSERT ", "PRAGMA ", "CREATE TABLE", " in: "})
    EXPECT_THAT(out, Not(HasSubstr(kw))) << out;
}

}  // namespace

TEST_F(Cli, HelpEndsWithTheExitCodeTable) {
  for (const std::string args : {"--help", "check --help", "analyze --help", "vm exec --help"}) {
    const auto r = harness(args);
    EXPECT_EQ(r.code, 0) << args;
    EXPECT_THAT(r.out, HasSubstr("Exit codes: 0 ok; 1 finding")) << args;
    EXPECT_THAT(r.out, HasSubstr("64 command-line usage error")) << args;
  }
}

TEST_F(Cli, MissingDbIsExit2FromEverySubcommand) {
  const std::string db = (dir / "nope.db").string();
  for (const std::string& args : {"status " + db, "export " + db, "analyze " + db, "pilot-select " + db,
                                 "mark-infra " + db + " some-case --reason x", "run " + db}) {
    const auto r = harness(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr(db)) << args;
    EXPECT_THAT(r.out, HasSubstr("no such")) << args;
  }
}

TEST_F(Cli, NonDbFilesAreNamedPlainlyWithoutSql) {
  const std::string text = file("notes.txt", "this is not a database\n");
  const std::string empty = file("empty.db", "");
  const std::string foreign = (dir / "foreign.db").string();
  {  // an SQLite file made by someone else: no harness tables
    std::string cmd = "/usr/bin/python3 -c \"import sqlite3; c = sqlite3.connect('" + foreign +
                      "'); c.execute('CREATE TABLE t(x)'); c.commit()\"";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }
  for (const std::string& f : {text, empty, foreign})
    for (const std::string sub : {"status", "export", "analyze", "pilot-select"}) {
      const auto r = harness(sub + " " + f);
      EXPECT_EQ(r.code, 2) << sub << " " << f << "\n" << r.out;
      EXPECT_THAT(r.out, HasSubstr(f)) << sub;
      expect_no_sql(r.out);
    }
  EXPECT_THAT(harness("analyze " + text).out, HasSubstr("is not an SQLite database"));
  EXPECT_THAT(harness("analyze " + empty).out, HasSubstr("is an empty file, not a harness DB"));
  EXPECT_THAT(harness("status " + foreign).out, HasSubstr("not a harness results DB"));
  // plan/run/check never write into a file that is not a harness DB
  const auto p = harness("plan " + campaign("smoke.yaml") + " " + text);
  EXPECT_EQ(p.code, 2) << p.out;
  EXPECT_THAT(p.out, HasSubstr("refusing to write into it"));
  std::ifstream in(text);
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first, "this is not a database");
}

TEST_F(Cli, ExportAsTheDocsWriteIt) {
  const std::string db = (dir / "s.db").string(), out = (dir / "tables").string();
  ASSERT_EQ(harness("plan " + campaign("smoke.yaml") + " " + db).code, 0);
  for (const std::string format : {"--format csv", "--format=csv"}) {
    fs::remove_all(out);
    const auto r = harness("export " + db + " " + format + " --out " + out);
    EXPECT_EQ(r.code, 0) << format << "\n" << r.out;
    EXPECT_TRUE(fs::exists(fs::path(out) / "cases.csv")) << format << "\n" << r.out;
  }
}

TEST_F(Cli, UsageErrorsAre64AndInvalidValuesAreRefused) {
  const std::string yaml = campaign("smoke.yaml"), db = (dir / "s.db").string();
  ASSERT_EQ(harness("plan " + yaml + " " + db).code, 0);
  struct Case {
    std::string args, names;
  };
  for (const Case& c : {Case{"status " + db + " --no-such-option", "--no-such-option"},
                        Case{"analyze " + db + " --seed -1", "--seed"},
                        Case{"analyze " + db + " --seed 18446744073709551616", "--seed"},
                        Case{"analyze " + db + " -B 0", "--replicates"},
                        Case{"analyze " + db + " -B -5", "--replicates"},
                        Case{"analyze " + db + " -B 5", "minimum B"},
                        Case{"analyze " + db + " --threads -1", "--threads"},
                        Case{"analyze " + db + " --format xml", "--format"},
                        Case{"qualify --min-free-disk-mib -1", "--min-free-disk-mib"},
                        Case{"qualify --min-free-disk-mib 64 --min-free-disk 1G", "excludes"},
                        Case{"qualify --vcpus 0", "--vcpus"},
                        Case{"case run --spec x.json --out d --min-free-disk-mib -3", "--min-free-disk-mib"},
                        Case{"plan " + yaml + " " + db + " --db " + (dir / "other.db").string(), "--db"},
                        Case{"run " + yaml + " " + db + " --db " + (dir / "other.db").string(), "given twice"},
                        Case{"run " + yaml, "DB"},
                        Case{"status", "DB is required"}}) {
    const auto r = harness(c.args);
    EXPECT_EQ(r.code, 64) << c.args << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr(c.names)) << c.args;
  }
  // A valid seed and B are used as given (analysis then stops: no triplet in a plan-only DB, 2).
  const auto ok = harness("analyze " + db + " --seed 0 -B 20000");
  EXPECT_EQ(ok.code, 2) << ok.out;
  EXPECT_THAT(ok.out, HasSubstr("no complete matched triplet"));
}

TEST_F(Cli, DbIsPositionalAndDashDashDbStillWorks) {
  const std::string yaml = campaign("smoke.yaml");
  const std::string a = (dir / "a.db").string(), b = (dir / "b.db").string();
  const auto pa = harness("plan " + yaml + " " + a);
  EXPECT_EQ(pa.code, 0) << pa.out;
  EXPECT_THAT(pa.out, HasSubstr("stored in " + a));
  const auto pb = harness("plan " + yaml + " --db " + b);
  EXPECT_EQ(pb.code, 0) << pb.out;
  for (const auto& db : {a, b}) {
    const auto s = harness("status " + db);
    EXPECT_EQ(s.code, 0) << s.out;
    EXPECT_THAT(s.out, HasSubstr("pending")) << s.out;
  }
  const auto none = harness("plan " + yaml);
  EXPECT_EQ(none.code, 0);
  EXPECT_THAT(none.out, HasSubstr("stored nothing: no DB given (`harness plan FILE DB` preregisters this plan)"));
  // Planning the same campaign into the same DB again is accepted (same plan).
  EXPECT_EQ(harness("plan " + yaml + " " + a).code, 0);
}

TEST_F(Cli, FreeDiskOptionHasOneNameAndTheOldSpellingSaysDeprecated) {
  const auto help = harness("qualify --help");
  EXPECT_THAT(help.out, HasSubstr("--min-free-disk-mib UINT"));
  EXPECT_THAT(help.out, HasSubstr("DEPRECATED: use --min-free-disk-mib"));
  EXPECT_THAT(harness("case run --help").out, HasSubstr("--min-free-disk-mib UINT"));
  // Same default in both (the case executor's): a host that qualifies has the space a case needs.
  EXPECT_THAT(help.out, HasSubstr("=2048"));
  const auto old = harness("qualify --root " + (dir / "no-root").string() +
                           " --no-reclaim-probe --no-trial-swapon --min-free-disk 1G");
  EXPECT_NE(old.code, 64) << old.out;
  EXPECT_THAT(old.out, HasSubstr("--min-free-disk is deprecated; use --min-free-disk-mib 1024"));
}

TEST_F(Cli, PilotSelectAndAnalyzeRefuseTheOtherKindOfDb) {
  const std::string triplets = (dir / "t.db").string(), pilot = (dir / "p.db").string();
  ASSERT_EQ(harness("plan " + campaign("smoke.yaml") + " " + triplets).code, 0);
  ASSERT_EQ(harness("plan " + campaign("pilot.yaml") + " " + pilot).code, 0);
  const auto ps = harness("pilot-select " + triplets);
  EXPECT_EQ(ps.code, 2) << ps.out;
  EXPECT_THAT(ps.out, HasSubstr("is not a pilot DB"));
  const auto an = harness("analyze " + pilot);
  EXPECT_EQ(an.code, 2) << an.out;
  EXPECT_THAT(an.out, HasSubstr("is a pilot DB"));
  EXPECT_THAT(an.out, HasSubstr("harness pilot-select " + pilot));
  // A pilot planned but not run: how far it got and what to do, not a guess at the DB's kind.
  const auto unrun = harness("pilot-select " + pilot);
  EXPECT_EQ(unrun.code, 2) << unrun.out;
  EXPECT_THAT(unrun.out, HasSubstr(pilot + ": no completed bounded-reclaim case with dose_bytes: 0 of 16 planned "
                                   "case(s) completed (run the pilot first: `harness run " + pilot + "`)"));
}

// A 201 KB spec nested 100,000 deep: a refused spec (2) naming the depth limit, not a
// crash (it overflowed the stack when the parsed document was copied: exit 139).
TEST_F(Cli, CaseCheckRefusesADeeplyNestedSpecNamingTheLimit) {
  const std::string spec = file("deep.json", "{\"case_id\": \"x\", \"campaign\": " + std::string(100000, '[') +
                                                 std::string(100000, ']') + "}");
  const Result r = harness("case check --spec " + spec);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("deep.json: JSON nests arrays/objects deeper than 64 levels (limit 64)"));
}
