// A network partition does not decide an outcome (docs/PROTOCOL.md "A silent agent"): one
// local guest (`harness vm up`, listed with `local: true`) runs tests/vm/campaign/
// partition.yaml; in the first case's pressure phase the test drops every TCP packet to and
// from the agent's forwarded port on the host (iptables, loopback) for longer than the
// runner's old 60 s rule, then lets them through again. The case finishes inside the guest meanwhile;
// the runner keeps asking within the case's deadline, the engine says the guest runs, and
// the bundle is imported once when the agent answers: the case is `completed`, never
// `lost`, and its attempt holds the silence. The timeline is printed.
#include "harness/vm/fleet.hpp"
#include "results/db.hpp"
#include "tests/common/db_query.hpp"
#include "tests/common/campaign_vm.hpp"
#include "tests/common/listed_guest.hpp"
#include "tests/common/wait_until.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using test_support::db_count;
using test_support::db_text;

const std::string kCampaign = std::string(HARNESS_SOURCE_DIR) + "/tests/vm/campaign/partition.yaml";
/// How long the agent's port stays blocked: longer than the old rule's 60 s plus what the
/// runner may not count as silence at the block's start: a status request held since just
/// before the block counts from when its answer was due (runner.status_wait_ms, 10 s, after
/// it was sent). With a 75 s block and only requests dropped, an answer to such a request
/// still arrived and the recorded silence started 19.9 s after the block and lasted 56 s.
constexpr auto kBlock = std::chrono::seconds(90);
/// What the runner may leave out of the recorded silence at the block's start
/// (harness/campaign/runner/runner.cpp follow()): the first unanswered request is sent at most one
/// poll interval after the block began (runner.poll_interval_ms, 500 ms in partition.yaml),
/// and its silence starts when its held answer was due, at most runner.status_wait_ms (the
/// default, 10 s) after it was sent; plus 2 s for the host's scheduling of the runner and
/// of this test on a loaded machine.
constexpr auto kUncountedAtStart = std::chrono::milliseconds(500) + std::chrono::seconds(10) + std::chrono::seconds(2);
/// The old rule the silence must outlast.
constexpr auto kOldRule = std::chrono::seconds(60);
static_assert(kBlock - kUncountedAtStart > kOldRule + std::chrono::seconds(10),
              "the block must outlast the old rule by a margin even when the runner counts the least it may");

std::int64_t unix_ns() {
  struct timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// `sql` (one integer) on the DB at `path`, -1 while the DB cannot be read.
std::int64_t poll_db(const std::string& path, const std::string& sql) {
  if (!std::filesystem::exists(path)) return -1;
  try {
    results::Db db(path, results::Db::Mode::ReadOnly);
    return db_count(db, sql);
  } catch (const results::DbError&) {
    return -1;
  }
}

/// The DROP rules on the agent's port, both directions (requests to it and its answers, as a
/// real partition drops both: with requests alone dropped, an answer to a request held since
/// before the block would still arrive), removed on destruction whatever the test gave.
class PortBlock {
 public:
  explicit PortBlock(int port) {
    for (const char* dir : {"--dport", "--sport"})
      rules_.push_back(std::string("INPUT -i lo -p tcp ") + dir + " " + std::to_string(port) +
                       " -m comment --comment reclaim-harness-partition-test -j DROP");
  }
  bool block() {
    for (const auto& r : rules_) {
      if (std::system(("iptables -I " + r).c_str()) != 0) return false;
      ++in_;
    }
    return true;
  }
  bool unblock() {
    while (in_ > 0) {
      if (std::system(("iptables -D " + rules_[in_ - 1]).c_str()) != 0) return false;
      --in_;
    }
    return true;
  }
  ~PortBlock() { unblock(); }

 private:
  std::vector<std::string> rules_;
  std::size_t in_ = 0;  ///< rules_[0, in_) are in the table
};

double seconds_between(std::int64_t a_ns, std::int64_t b_ns) { return static_cast<double>(b_ns - a_ns) / 1e9; }

}  // namespace

TEST(RunnerPartition, AgentPortBlockedPastTheOldRuleInPressureIsCompletedAndImportedOnce) {
  ASSERT_EQ(std::system("iptables -L INPUT -n >/dev/null 2>&1"), 0)
      << "iptables cannot list INPUT here (harness/scripts/install-deps.sh installs it; the test runs as root)";
  const test_support::CampaignVm vm("partition");
  const std::string db_path = vm.dir + "/partition.db";
  const auto listed = test_support::boot_listed_guest(vm, "", "    local: true\n");
  ASSERT_EQ(listed.error, "") << "see " << vm.log;
  const std::string& url = listed.guest.url;
  const int port = std::stoi(url.substr(url.rfind(':') + 1));
  const std::string& hosts = listed.hosts_file;

  const pid_t runner = vm.spawn_harness({"run", kCampaign, "--db", db_path, "--hosts", hosts, "--plain"});
  const std::string first = "(SELECT case_id FROM schedule ORDER BY ordinal LIMIT 1)";
  const std::string row = " FROM attempts WHERE case_id = " + first;
  const bool in_pressure = test_support::wait_until(
      [&] {
        return poll_db(db_path, "SELECT count(*)" + row +
                                    " AND status = 'running' AND json_extract(detail_json, '$.phase') = 'pressure'") >= 1;
      },
      std::chrono::minutes(5), std::chrono::milliseconds(200));
  PortBlock blk(port);
  std::int64_t blocked_ns = 0, unblocking_ns = 0, unblocked_ns = 0;
  std::chrono::steady_clock::time_point block_start;
  bool met = false, unblocked = false;
  if (in_pressure && blk.block()) {
    blocked_ns = unix_ns();
    block_start = std::chrono::steady_clock::now();
    std::printf("blocked tcp port %d (agent %s) in the first case's pressure phase\n", port, url.c_str());
    std::fflush(stdout);
    // The runner meets the silence (its attempt row records the episode) ...
    met = test_support::wait_until(
        [&] { return poll_db(db_path, "SELECT json_array_length(detail_json, '$.silence.episodes')" + row) >= 1; },
        std::chrono::minutes(2), std::chrono::milliseconds(200));
    // ... and the partition lasts kBlock: a duration the test imposes (the treatment), not a
    // wait standing in for an event.
    std::this_thread::sleep_until(block_start + kBlock);
    unblocking_ns = unix_ns();  // no answer crosses the DROP rules before this
    unblocked = blk.unblock();
    unblocked_ns = unix_ns();
    std::printf("unblocked after %.1f s\n", seconds_between(blocked_ns, unblocked_ns));
    std::fflush(stdout);
  }
  int st = 0;
  const bool ended = test_support::wait_until([&] { return waitpid(runner, &st, WNOHANG) == runner; },
                                              std::chrono::minutes(6), std::chrono::milliseconds(200));
  if (!ended) {
    kill(runner, SIGKILL);
    waitpid(runner, nullptr, 0);
  }
  vm.harness("vm down vm0");
  ASSERT_TRUE(in_pressure) << "the first case never reached its pressure phase; see " << vm.log;
  ASSERT_NE(blocked_ns, 0) << "iptables -I failed; see " << vm.log;
  ASSERT_TRUE(unblocked) << "iptables -D failed";
  ASSERT_TRUE(met) << "the runner never recorded the silence; see " << vm.log;
  ASSERT_TRUE(ended) << "the runner did not finish within 6 min of the partition; see " << vm.log;
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "see " << vm.log;

  results::Db db(db_path, results::Db::Mode::ReadOnly);
  EXPECT_EQ(db_count(db, "SELECT count(*) FROM schedule WHERE state = 'completed'"), 3) << "see " << vm.log;
  EXPECT_EQ(db_count(db, "SELECT count(*) FROM cases"), 3);
  EXPECT_EQ(db_count(db, "SELECT count(*) FROM cases WHERE status = 'lost'"), 0);
  EXPECT_EQ(db_count(db, "SELECT count(*) FROM attempts"), 3);  // nothing rerun
  EXPECT_EQ(db_text(db, "SELECT status || '/' || kind" + row), "completed/run");
  // Imported once, with the guest's data.
  EXPECT_EQ(db_count(db, "SELECT count(*) FROM cases WHERE case_id = " + first), 1);
  EXPECT_GT(db_count(db, "SELECT count(*) FROM telemetry WHERE case_id = " + first), 5);
  EXPECT_GT(db_count(db, "SELECT count(*) FROM canary_requests WHERE case_id = " + first), 0);
  // The silence as the runner saw it: one episode in pressure, bounded by the block the test
  // measured: it ends only once the rules are gone, and starts no later than the runner may
  // leave uncounted (kUncountedAtStart), so it outlasts the old 60 s rule (static_assert above).
  EXPECT_EQ(db_count(db, "SELECT json_array_length(detail_json, '$.silence.episodes')" + row), 1);
  EXPECT_EQ(db_text(db, "SELECT json_extract(detail_json, '$.silence.episodes[0].phase')" + row), "pressure");
  const std::int64_t s0 = db_count(db, "SELECT json_extract(detail_json, '$.silence.episodes[0].start_unix_ns')" + row);
  const std::int64_t s1 = db_count(db, "SELECT json_extract(detail_json, '$.silence.episodes[0].end_unix_ns')" + row);
  const std::int64_t uncounted_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(kUncountedAtStart).count();
  EXPECT_GE(s1, unblocking_ns);
  EXPECT_LE(s0, blocked_ns + uncounted_ns) << "silence started " << seconds_between(blocked_ns, s0) << " s after the block";
  EXPECT_GE(s1 - s0, (unblocking_ns - blocked_ns) - uncounted_ns);
  EXPECT_GT(s1 - s0, std::chrono::duration_cast<std::chrono::nanoseconds>(kOldRule).count());
  EXPECT_EQ(db_text(db, "SELECT json_extract(detail_json, '$.silence.episodes[0].liveness[0].answer')" + row), "running");
  EXPECT_EQ(db_count(db, "SELECT json_array_length(detail_json, '$.silence.boot_ids_seen')" + row), 1);  // no reboot
  const std::int64_t case_end = db_count(db, "SELECT ended_unix_ns FROM cases WHERE case_id = " + first);
  const std::int64_t imported = db_count(db, "SELECT ended_unix_ns" + row);
  const std::int64_t submitted = db_count(db, "SELECT json_extract(detail_json, '$.submitted_unix_ns')" + row);
  EXPECT_GE(imported, unblocking_ns);
  std::printf("timeline of the first case (s after submission):\n"
              "  port blocked                %7.1f\n"
              "  runner's silence start      %7.1f  (first unanswered status request due)\n"
              "  case ended in the guest     %7.1f  (cases.ended_unix_ns, while blocked: %s)\n"
              "  port unblocked              %7.1f\n"
              "  runner's silence end        %7.1f  (silence %.1f s)\n"
              "  bundle imported             %7.1f  (attempts.ended_unix_ns)\n",
              seconds_between(submitted, blocked_ns), seconds_between(submitted, s0),
              seconds_between(submitted, case_end), case_end < unblocked_ns ? "yes" : "no",
              seconds_between(submitted, unblocked_ns), seconds_between(submitted, s1), seconds_between(s0, s1),
              seconds_between(submitted, imported));
  std::fflush(stdout);
  if (!::testing::Test::HasFailure()) std::filesystem::remove_all(vm.dir);
}
