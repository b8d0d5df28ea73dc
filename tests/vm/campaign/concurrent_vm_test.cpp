// Two campaigns at once on one machine (issue 59 item 7): two copies of
// tests/vm/campaign/concurrent.yaml (concurrent-a, concurrent-b; one local-qemu guest, two short
// cases each) run from one cache, the second started as soon as the first has claimed its local
// guest, so that both boot and run their cases at the same time.
// Before, local guests were named vm0..vmN for every campaign: the second found "vm0" running
// for the first and was refused (exit 2, "vm0 is already running ... was not booted for
// campaign concurrent-b"). Now each campaign takes a free local guest
// (harness/pool/local_guest/slots.hpp): both finish every case, both keep the VM name vm0 in
// their plans and cases, the second runs as local guest vm1 (its hosts file says so), their
// cases overlap in time, and the second's capacity counted the first one's guest (booting or
// running: 2 guests on this machine, recorded per case as cases.overcommitted when that is
// beyond cores - 1).
#include "results/db.hpp"
#include "tests/common/campaign_vm.hpp"
#include "tests/common/db_query.hpp"
#include "tests/common/slurp.hpp"
#include "tests/common/wait_until.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <regex>
#include <string>

using test_support::db_count;
using test_support::db_text;
using ::testing::HasSubstr;

namespace {

/// concurrent.yaml named `name`, written into `dir`; returns its path.
std::string campaign_copy(const std::string& dir, const std::string& name) {
  std::string t = test_support::slurp(std::string(HARNESS_SOURCE_DIR) + "/tests/vm/campaign/concurrent.yaml");
  t.replace(t.find("\nname: concurrent\n"), 18, "\nname: " + name + "\n");
  const std::string path = dir + "/" + name + ".yaml";
  std::ofstream(path) << t;
  return path;
}

/// Waits for child `pid` at most `limit`; its exit code, or -1 (still running: killed) / -2.
int wait_exit(pid_t pid, std::chrono::seconds limit) {
  int st = 0;
  const bool ended = test_support::wait_until([&] { return ::waitpid(pid, &st, WNOHANG) == pid; }, limit,
                                              std::chrono::milliseconds(200));
  if (!ended) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &st, 0);
    return -1;
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : -2;
}

/// Online CPUs this process may use (what the capacity rule counts: local_host.hpp online_cpus).
int cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  const int allowed = ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : static_cast<int>(online);
  return std::min(static_cast<int>(online), allowed);
}

}  // namespace

TEST(ConcurrentCampaigns, TwoCampaignsFromOneCacheRunSideBySide) {
  const test_support::CampaignVm vm("concurrent");
  ASSERT_EQ(vm.harness("vm image").code, 0) << "see " << vm.log;
  const std::string a = campaign_copy(vm.dir, "concurrent-a"), b = campaign_copy(vm.dir, "concurrent-b");
  const std::string a_db = vm.dir + "/a.db", b_db = vm.dir + "/b.db";
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t run_a = vm.spawn_harness({"run", a, a_db, "--plain"});
  // A has claimed its local guest (owner.json written before the boot): B starts beside it.
  const std::string a_owner = vm.xdg + "/reclaim-harness/vms/vm0/owner.json";
  const bool a_running = test_support::wait_until(
      [&] { return test_support::slurp(a_owner).find("\"concurrent-a\"") != std::string::npos; },
      std::chrono::seconds(600), std::chrono::milliseconds(50));
  const pid_t run_b = vm.spawn_harness({"run", b, b_db, "--plain"});
  const int code_a = wait_exit(run_a, std::chrono::seconds(900)), code_b = wait_exit(run_b, std::chrono::seconds(900));
  std::printf("two campaigns at once: %.0f s wall\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  const std::string listed = vm.harness("vm list").out;  // before `vm down`: each run stopped its own guest
  const std::string log = vm.harness("vm down").out;
  ASSERT_TRUE(a_running) << "campaign a never claimed a local guest; see " << vm.log;
  EXPECT_EQ(code_a, 0) << "see " << vm.log;
  ASSERT_EQ(code_b, 0) << "see " << vm.log;
  std::int64_t first[2], last[2];  // each run's attempts: first start, last end (host clock, ns)
  int side = 0;
  for (const auto& db_path : {a_db, b_db}) {
    results::Db db(db_path, results::Db::Mode::ReadOnly);
    EXPECT_EQ(db_count(db, "SELECT count(*) FROM schedule WHERE state = 'completed'"), 2) << db_path;
    // The campaign's VM name is the stratum everywhere: plan, schedule and cases.
    EXPECT_EQ(db_count(db, "SELECT count(*) FROM cases WHERE vm = 'vm0' AND status = 'completed'"), 2) << db_path;
    EXPECT_EQ(db_count(db, "SELECT count(*) FROM schedule WHERE vm <> 'vm0'"), 0) << db_path;
    first[side] = db_count(db, "SELECT min(started_unix_ns) FROM attempts");
    last[side++] = db_count(db, "SELECT max(ended_unix_ns) FROM attempts");
  }
  // At the same time: each run's cases began before the other's ended.
  std::printf("attempts: a %.1f s .. %.1f s, b %.1f s .. %.1f s (from a's first)\n", 0.0, (last[0] - first[0]) / 1e9,
              (first[1] - first[0]) / 1e9, (last[1] - first[0]) / 1e9);
  EXPECT_LT(first[1], last[0]);
  EXPECT_LT(first[0], last[1]);
  // Where each ran: a as local guest vm0, b as vm1 (vm0 was a's), listed under vm0.
  const std::string hosts_a = test_support::slurp(vm.dir + "/concurrent-a.hosts.yaml");
  const std::string hosts_b = test_support::slurp(vm.dir + "/concurrent-b.hosts.yaml");
  EXPECT_THAT(hosts_a, HasSubstr("  - name: vm0\n    url: "));
  EXPECT_THAT(hosts_a, ::testing::Not(HasSubstr("local_guest:")));
  EXPECT_THAT(hosts_b, HasSubstr("  - name: vm0\n    local_guest: vm1\n"));
  EXPECT_THAT(log, HasSubstr("vm0: runs as local guest vm1"));
  // B's capacity counted a's running guest: two guests on this machine, a's named by its owner.
  EXPECT_THAT(log, ::testing::ContainsRegex("\n  local:[^ ]+ +2 +2 +[0-9]+ +1024 +"));
  EXPECT_THAT(log, ::testing::ContainsRegex("\n  local:[^ ]+ +1 +1 +[0-9]+ +1024 +"));  // a's, alone
  const int over = 2 > cores() - 1 ? 1 : 0;
  results::Db db_b(b_db, results::Db::Mode::ReadOnly);
  EXPECT_EQ(db_count(db_b, "SELECT count(*) FROM cases WHERE overcommitted = " + std::to_string(over)), 2);
  if (over) EXPECT_THAT(log, HasSubstr("plus 1 other running guest(s) (vm0 (campaign concurrent-a's vm0"));
  // Nothing of either was left running when both runs ended.
  EXPECT_THAT(listed.substr(listed.rfind("NAME ")), ::testing::Not(HasSubstr(" running ")));
}
