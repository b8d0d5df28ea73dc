// `harness status` (harness/campaign/commands/status.hpp status_report) as a whole: every section of
// the report, in its order, over a campaign DB with a row for each (written here), and the
// report of a DB with nothing to list (no section header without rows). The runner tests
// check single lines of it as cases run; this pins the whole text.
#include "harness/campaign/commands/status.hpp"

#include "results/db.hpp"

#include <gtest/gtest.h>

#include <string>

#include "test_files.hpp"

namespace {

namespace hc = harness::campaign;

constexpr std::int64_t kNow = 2'000'000'000'000'000'000;  // 2033-05-18, wall clock ns

/// A campaign DB with six scheduled cases over two VMs and an attempt of every kind.
void fill(results::Db& db) {
  db.exec(
      "INSERT INTO campaign_meta(key, value) VALUES ('schedule_sha256', 'abc123'), ('name', 'demo'), "
      "('unusable:vm1', 'the restoration of case c2 was unclean');"
      "INSERT INTO schedule(case_id, ordinal, vm, regime, repeat, configuration, state) VALUES "
      "('c1', 0, 'vm0', 'fast', 1, 'static-zram', 'completed'), ('c2', 1, 'vm1', 'fast', 1, 'static-zram', 'lost'),"
      "('c3', 2, 'vm0', 'slow', 1, 'static-zram', 'infra_failed'), ('c4', 3, 'vm1', 'slow', 1, 'static-zram', 'pending'),"
      "('c5', 4, 'vm0', 'fast', 2, 'static-zram', 'pending'), ('c6', 5, 'vm1', 'fast', 2, 'static-zram', 'infra_failed');"
      "INSERT INTO attempts(case_id, attempt, status, error, started_unix_ns, ended_unix_ns, kind, detail_json) VALUES "
      "('c1', 1, 'completed', NULL, 1000000000000000000, 1000000060000000000, 'adopted', '{\"takeovers\":[{},{}]}'),"
      "('c2', 1, 'lost', NULL, 1000000000000000000, 1000000120000000000, 'run', '{\"phase\":\"pressure\"}'),"
      "('c3', 1, 'infra_failed', 'agent: boom 1', 1000000000000000000, 1000000010000000000, 'run', NULL),"
      "('c3', 2, 'infra_failed', 'agent: boom 2', 1000000010000000000, 1000000020000000000, 'run', NULL),"
      "('c4', 1, 'running', NULL, 1000000200000000000, NULL, 'run', '{\"phase\":\"warmup\",\"runner_pid\":4242}'),"
      "('c5', 1, 'reset_infra', NULL, NULL, 1000000300000000000, 'reset-infra', "
      "'{\"operator\":\"bob\",\"reason\":\"agents were down\"}'),"
      "('c6', 1, 'completed', NULL, 1000000000000000000, 1000000050000000000, 'run', NULL),"
      "('c6', 2, 'marked_infra', NULL, NULL, 1000000400000000000, 'mark-infra', "
      "'{\"previous_status\":\"completed\",\"operator\":\"ann\",\"reason\":\"host fault\"}');");
}

TEST(StatusReport, ListsEverySectionInOrder) {
  testfiles::TempDir t;
  results::Db db(t / "c.db", results::Db::Mode::Create);
  fill(db);
  const std::string expected =
      "name: demo\n"
      "schedule_sha256: abc123\n"
      "cases: 6 planned, 1 completed, 1 lost, 2 infra_failed, 2 pending; 5 attempts (1 reruns), 1 in flight, 0 "
      "interrupted before reaching an agent, 2 operator actions\n"
      "  vm0: 3 planned, 1 completed, 0 lost, 1 infra_failed, 1 pending\n"
      "  vm1: 3 planned, 0 completed, 1 lost, 1 infra_failed, 1 pending\n" +
      hc::progress_lines(db, kNow) +
      "  vm1 UNUSABLE: the restoration of case c2 was unclean\n"
      "lost (kept as outcomes; only if the infrastructure decided one: `harness mark-infra DB CASE --reason TEXT "
      "--override-outcome`, audited and reported):\n"
      "  c2 (phase never seen): \n"
      "in flight (a runner is running, or was interrupted: `harness run` takes these over):\n"
      "  c4 (attempt 1, phase warmup, runner pid 4242)\n"
      "taken over after the runner was interrupted:\n"
      "  c1 (attempt 1): completed, 2 takeover(s)\n"
      "reset-infra (operator restarted the retry budget):\n"
      "  c5 (attempt 1): by bob: agents were down\n"
      "mark-infra (operator reclassified as infra_failed):\n"
      "  c6 (attempt 2): was completed (outcome overridden), by ann: host fault\n"
      "infra_failed:\n"
      "  c3 (2 attempts): agent: boom 2\n"
      "  c6 (1 attempts): \n"
      "next pending:\n"
      "  c4\n"
      "  c5\n"
      "completed outcomes kept: 0 case(s) with OOM kills, 0 reclaim write(s) with errno != 0\n";
  EXPECT_EQ(hc::status_report(db, kNow), expected);
  EXPECT_NE(hc::progress_lines(db, kNow).find("ETA: about"), std::string::npos);  // the section is not empty here
}

TEST(StatusReport, ADbWithNothingToListHasNoSectionHeaders) {
  testfiles::TempDir t;
  results::Db db(t / "c.db", results::Db::Mode::Create);
  EXPECT_EQ(hc::status_report(db, kNow),
            "cases: 0 planned, 0 completed, 0 lost, 0 infra_failed, 0 pending; 0 attempts (0 reruns), 0 in flight, 0 "
            "interrupted before reaching an agent, 0 operator actions\n"
            "elapsed: nothing started yet\n"
            "completed outcomes kept: 0 case(s) with OOM kills, 0 reclaim write(s) with errno != 0\n");
}

}  // namespace
