// Runner takeover on a real local guest: `harness run` is killed with SIGKILL in the
// pressure phase of case 2, then the same command is run again and killed during the
// import of case 2's bundle (run by harness-import-pause, the CLI built with the pause of
// import_pause.cpp: HARNESS_TEST_PAUSE_AT=import:FILE, tests/README.md), then run a third
// time with `harness`. It finishes the campaign; every case is in `cases` exactly once;
// the attempts row of case 2 keeps its real start and records both interruptions and takeovers.
// Campaign: tests/vm/campaign/takeover.yaml (smoke's mechanism with shorter phases).
#include "results/db.hpp"
#include "tests/common/db_query.hpp"
#include "tests/common/campaign_vm.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

namespace {

using test_support::db_count;
using test_support::db_text;

const std::string kCampaign = std::string(HARNESS_SOURCE_DIR) + "/tests/vm/campaign/takeover.yaml";

/// Starts `harness run takeover.yaml --db DB --plain` in the background, with `vm`'s
/// environment and output appended to its log, so that the test can kill it;
/// `pause_marker` non-empty runs harness-import-pause instead (the same CLI, plus the
/// pause) with HARNESS_TEST_PAUSE_AT=import:<pause_marker>.
pid_t spawn_run(const test_support::CampaignVm& vm, const std::string& db, const std::string& pause_marker) {
  const pid_t pid = fork();
  if (pid == 0) {
    std::freopen(vm.log.c_str(), "a", stdout);
    std::freopen(vm.log.c_str(), "a", stderr);
    setenv("XDG_CACHE_HOME", vm.xdg.c_str(), 1);
    if (!pause_marker.empty()) setenv("HARNESS_TEST_PAUSE_AT", ("import:" + pause_marker).c_str(), 1);
    const std::string harness = pause_marker.empty()
                                    ? test_support::harness_binary()
                                    : std::string(HARNESS_BINARY_DIR) + "/tests/vm/campaign/harness-import-pause";
    execl(harness.c_str(), harness.c_str(), "run", kCampaign.c_str(), "--db", db.c_str(), "--plain",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

/// Polls `sql` (one integer) on the DB until it is >= 1 or `limit` passes; false on timeout.
bool wait_for(const std::string& db_path, const std::string& sql, std::chrono::seconds limit) {
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < limit) {
    if (std::filesystem::exists(db_path)) {
      try {
        results::Db db(db_path, results::Db::Mode::ReadOnly);
        if (db_count(db, sql) >= 1) return true;
      } catch (const results::DbError&) {
        // busy or not yet written: polled again until the deadline, which fails the wait
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return false;
}

void kill9(pid_t pid) {
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int st = 0;
  waitpid(pid, &st, 0);
  ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) << "the runner ended before it was killed";
}

}  // namespace

TEST(RunnerTakeover, KillNineInPressureAndDuringImportThenTheSameCommandFinishes) {
  const test_support::CampaignVm vm("takeover");
  const std::string dir = vm.dir, log = vm.log;
  const std::string db_path = dir + "/takeover.db";
  ASSERT_EQ(vm.harness("vm image").code, 0) << "see " << log;
  vm.harness("vm down");  // leftovers of an aborted run
  const std::string case2 =
      "(SELECT case_id FROM schedule ORDER BY ordinal LIMIT 1 OFFSET 1)";

  // 1. Kill the runner 2 s into the pressure phase of case 2 (the guest keeps running it): the
  // phase lasts 10 s (takeover.yaml), so the runner has seen nothing past 'pressure' when killed.
  const pid_t first = spawn_run(vm, db_path, "");
  ASSERT_TRUE(wait_for(db_path,
                       "SELECT count(*) FROM attempts WHERE case_id = " + case2 +
                           " AND status = 'running' AND json_extract(detail_json, '$.phase') = 'pressure'",
                       std::chrono::seconds(240)))
      << "case 2 never reached the pressure phase; see " << log;
  std::this_thread::sleep_for(std::chrono::seconds(2));
  kill9(first);

  // 2. The same command takes over; kill it inside the import transaction of case 2.
  const std::string marker = dir + "/paused-at-import";
  const pid_t second = spawn_run(vm, db_path, marker);
  const auto t0 = std::chrono::steady_clock::now();
  while (!std::filesystem::exists(marker) && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(150))
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_TRUE(std::filesystem::exists(marker)) << "the second runner never reached the import; see " << log;
  kill9(second);
  {
    results::Db db(db_path, results::Db::Mode::ReadOnly);
    // The import transaction was rolled back: case 2 is still in flight, not in `cases`.
    EXPECT_EQ(db_count(db, "SELECT count(*) FROM cases WHERE case_id = " + case2), 0);
    EXPECT_EQ(db_text(db, "SELECT status || '/' || kind FROM attempts WHERE case_id = " + case2), "running/adopted");
  }

  // 3. The same command again: takes over case 2 (imports its bundle once), runs case 3.
  const auto third = vm.run_then_down("run " + kCampaign + " --db " + db_path + " --plain");
  ASSERT_EQ(third.code, 0) << "see " << log;  // -1: it did not exit normally

  results::Db db(db_path, results::Db::Mode::ReadOnly);
  EXPECT_EQ(db_count(db, "SELECT count(*) FROM schedule WHERE state = 'completed'"), 3) << "see " << log;
  EXPECT_EQ(db_count(db, "SELECT count(*) FROM cases"), 3);
  EXPECT_EQ(db_count(db, "SELECT count(DISTINCT case_id) FROM cases WHERE status = 'completed'"), 3);
  EXPECT_EQ(db_count(db, "SELECT count(*) FROM attempts"), 3);  // one attempt per case: nothing run twice
  EXPECT_EQ(db_count(db, "SELECT count(*) FROM attempts WHERE status = 'running'"), 0);
  const std::string row = " FROM attempts WHERE case_id = " + case2;
  EXPECT_EQ(db_text(db, "SELECT status || '/' || kind" + row), "completed/adopted");
  EXPECT_EQ(db_count(db, "SELECT json_extract(detail_json, '$.runner_interrupted')" + row), 1);
  EXPECT_EQ(db_count(db, "SELECT json_array_length(detail_json, '$.takeovers')" + row), 2);
  EXPECT_EQ(db_text(db, "SELECT json_extract(detail_json, '$.takeovers[0].phase_seen_before')" + row), "pressure");
  EXPECT_EQ(db_count(db, "SELECT json_extract(detail_json, '$.takeovers[0].interrupted_runner_pid')" + row), first);
  EXPECT_EQ(db_count(db, "SELECT json_extract(detail_json, '$.takeovers[1].interrupted_runner_pid')" + row), second);
  // The real start: before the case started in the guest and before either takeover.
  EXPECT_EQ(db_count(db, "SELECT a.started_unix_ns <= c.started_unix_ns FROM attempts a JOIN cases c USING (case_id) "
                      "WHERE a.case_id = " + case2),
            1);
  EXPECT_EQ(db_count(db, "SELECT started_unix_ns < json_extract(detail_json, '$.takeovers[0].took_over_unix_ns') AND "
                      "json_extract(detail_json, '$.takeovers[0].took_over_unix_ns') < "
                      "json_extract(detail_json, '$.takeovers[1].took_over_unix_ns') AND "
                      "json_extract(detail_json, '$.takeovers[1].took_over_unix_ns') < ended_unix_ns" + row),
            1);
  // Case 2's data came in once, with real telemetry and canary requests.
  // 3 + 10 + 3 s at 1 Hz = 16 samples; the bound scaled with them (> 10 of the former 21:
  // 16 x 10 / 21 = 7.6), i.e. about half the ticks, a late tick being skipped, never caught up.
  EXPECT_GT(db_count(db, "SELECT count(*) FROM telemetry WHERE case_id = " + case2), 7);
  EXPECT_GT(db_count(db, "SELECT count(*) FROM canary_requests WHERE case_id = " + case2), 0);
  EXPECT_TRUE(std::filesystem::is_empty(dir + "/.bundles"));
  // What ran each case: the build (40-hex commit) and the accelerator (hosts file of `vm up`).
  EXPECT_EQ(db_count(db, "SELECT count(*) FROM cases WHERE length(source_commit) = 40"), 3);
  EXPECT_EQ(db_count(db, "SELECT count(*) FROM cases WHERE accelerator IN ('kvm', 'tcg')"), 3);
  std::filesystem::remove_all(dir);
}
