// The runner contract (tests/common/runner_contract.hpp) against a real guest's agent: one local
// guest listed by hand as a real VM (no `local: true`, so the engine cannot tell whether it
// lives and only the agent's evidence decides, as for a real VM) runs
// tests/vm/campaign/contract.yaml under `harness run`, and the test does to it what each
// scenario says, once the runner has recorded the case in that phase:
//   - death in warmup: the guest's qemu is SIGKILLed and, once the runner has recorded the
//     agent's silence, `harness vm reboot vm0` boots a fresh guest (new data disk, same address
//     and token): the attempt is infra_failed, the case is rerun on the new boot and completes,
//     and the report counts the case once (the failed attempt only in its attempts audit);
//   - reboot mid-pressure: the guest's power is cut (qemu SIGKILLed) and, once the runner has
//     recorded the agent's silence, the same qemu command line is started again on the same
//     data disk, so the guest boots anew with its state: the case is lost, its attempt records
//     the boot it ran on and the new one, it is never rerun, the run exits 0 (an outcome,
//     docs/PROTOCOL.md "Case status") and the restarted agent marks the VM unclean naming the
//     case ("Agent restart" in harness/agent/API.md).
// The DB, the agent's health after the run and the report are judged by expect_contract(), the
// same judge as the fake side's (tests/unit/campaign/runner_contract_test.cpp).
#include "harness/agent/client.hpp"
#include "harness/vm/fleet.hpp"
#include "results/db.hpp"
#include "tests/common/campaign_vm.hpp"
#include "tests/common/db_query.hpp"
#include "tests/common/listed_guest.hpp"
#include "tests/common/runner_contract.hpp"
#include "tests/common/wait_until.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace ct = test_support::contract;

/// The argv of a running process (/proc/PID/cmdline); empty when it is gone.
std::vector<std::string> argv_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::vector<std::string> out;
  for (std::string a; std::getline(in, a, '\0');) out.push_back(a);
  return out;
}

/// SIGKILL and wait until /proc/PID is gone; false when it stays.
bool kill_and_wait(pid_t pid) {
  if (kill(pid, SIGKILL) != 0) return false;
  return test_support::wait_until([&] { return !std::filesystem::exists("/proc/" + std::to_string(pid)); },
                                  std::chrono::seconds(30), std::chrono::milliseconds(50));
}

/// Runs `argv` (a qemu command line with -daemonize) and waits for its foreground part; true
/// when it daemonized (exit 0).
bool start_daemon(const std::vector<std::string>& argv) {
  const pid_t p = fork();
  if (p == 0) {
    std::vector<char*> a;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    execvp(a[0], a.data());
    _exit(127);
  }
  int st = 0;
  return p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

class ContractVm : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    vm_ = std::make_unique<test_support::CampaignVm>("contract");
    db_ = vm_->dir + "/contract.db";
    const auto t0 = std::chrono::steady_clock::now();
    setup_error_ = run();
    std::printf("boot, campaign and faults: %.0f s wall\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    vm_->harness("vm down vm0");
    if (setup_error_.empty()) report_ = ct::analyse(db_, vm_->dir + "/report");
  }
  static void TearDownTestSuite() {
    if (!::testing::UnitTest::GetInstance()->Failed()) std::filesystem::remove_all(vm_->dir);
    vm_.reset();
  }
  // A campaign that never ran fails every test of the suite (tests/README.md: never a skip).
  void SetUp() override { ASSERT_TRUE(setup_error_.empty()) << setup_error_ << "\nsee " << vm_->log; }

  /// The guest's qemu pid now (the fleet's record; it changes with each boot).
  static pid_t guest_pid() {
    const auto g = harness::vm::fleet_list(vm_->xdg + "/reclaim-harness");
    return g.size() == 1u ? g[0].pid : -1;
  }

  /// Applies `f` to the guest of the case at `ordinal`; "" when done. The guest stays down until
  /// the runner has recorded the agent's silence in the attempt, as the fake side waits for it:
  /// a guest back within the client's retries of one request (about 2 s of refused connections)
  /// can be answered by the new boot's agent without any silence, and then no boot id is compared.
  static std::string apply(ct::Fault f, int ordinal) {
    const pid_t pid = guest_pid();
    if (pid <= 0) return "no running guest to fault";
    const auto argv = argv_of(pid);
    if (argv.empty()) return "no command line of qemu pid " + std::to_string(pid);
    if (!kill_and_wait(pid)) return "kill -9 of qemu pid " + std::to_string(pid) + " failed";
    const std::string silence = "SELECT count(*) FROM attempts WHERE attempt = 1 AND case_id = (SELECT case_id FROM "
                                "schedule WHERE ordinal = " + std::to_string(ordinal) +
                                ") AND json_array_length(detail_json, '$.silence.episodes') >= 1";
    if (!test_support::wait_for_db(db_, silence, std::chrono::seconds(120)))
      return "the runner recorded no silence within 2 min of the guest's death";
    if (f == ct::Fault::DeathInWarmup) {
      std::printf("killed qemu pid %d in warmup; booting a fresh guest\n", pid);
      std::fflush(stdout);
      const auto r = vm_->harness("vm reboot vm0");
      return r.code == 0 ? "" : "vm reboot vm0 after the death in warmup failed:\n" + r.out;
    }
    if (!start_daemon(argv)) return "restarting qemu on the same disk failed";
    std::printf("cut the power of qemu pid %d in pressure; restarted on the same disk as pid %d\n", pid, guest_pid());
    std::fflush(stdout);
    return "";
  }

  /// Boots the guest, runs the campaign in the background and applies each scenario's fault
  /// once the runner has recorded its case in the fault's phase; "" when all of that happened.
  static std::string run() {
    const auto& vm = *vm_;
    const auto listed = test_support::boot_listed_guest(vm);
    if (!listed.error.empty()) return listed.error;
    const pid_t runner = vm.spawn_harness({"run", ct::campaign_file(), db_, "--hosts", listed.hosts_file, "--plain"});
    auto stop_runner = [&](const std::string& why) {
      kill(runner, SIGKILL);
      waitpid(runner, nullptr, 0);
      return why;
    };
    for (const auto& s : ct::scenarios()) {
      if (s.fault == ct::Fault::None) continue;
      const std::string phase = ct::fault_phase(s.fault);
      const std::string sql = "SELECT count(*) FROM attempts WHERE attempt = 1 AND status = 'running' AND case_id = "
                              "(SELECT case_id FROM schedule WHERE ordinal = " + std::to_string(s.ordinal) +
                              ") AND json_extract(detail_json, '$.phase') = '" + phase + "'";
      if (!test_support::wait_for_db(db_, sql, std::chrono::seconds(600)))
        return stop_runner("scenario '" + s.name + "': the runner never saw its case in " + phase + " within 10 min");
      if (auto err = apply(s.fault, s.ordinal); !err.empty()) return stop_runner("scenario '" + s.name + "': " + err);
    }
    // The reboot's silence ends when the agent answers on its new boot; 10 min is generous.
    int st = 0;
    if (!test_support::wait_until([&] { return waitpid(runner, &st, WNOHANG) == runner; }, std::chrono::minutes(10),
                                  std::chrono::milliseconds(200)))
      return stop_runner("the runner did not finish within 10 min of the last fault");
    runner_rc_ = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    try {
      const auto g = harness::vm::fleet_list(vm.xdg + "/reclaim-harness");
      if (g.size() != 1u) return "not one guest after the run";
      auto agent = harness::agent::AgentClient::from_token_file(g[0].url, g[0].token_file);
      health_ = agent.health().value();
      settled_ = ct::settled_state(agent, health_);
    } catch (const std::exception& e) {
      return std::string("GET /v1/health after the run: ") + e.what();
    }
    return "";
  }

  static inline std::unique_ptr<test_support::CampaignVm> vm_;
  static inline std::string db_, setup_error_, settled_;
  static inline int runner_rc_ = -1;
  static inline nlohmann::json health_, report_;
};

}  // namespace

TEST_F(ContractVm, TheRealAgentKeepsTheContract) { ct::expect_contract(db_, health_, settled_, report_); }

TEST_F(ContractVm, ALostCaseIsAnOutcomeTheRunExitsZero) { EXPECT_EQ(runner_rc_, 0) << "see " << vm_->log; }
