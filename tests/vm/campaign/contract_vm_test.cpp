// The runner contract (tests/common/runner_contract.hpp) against a real guest's agent: one local
// guest listed by hand as a real VM (no `local: true`, so the engine cannot tell whether it
// lives and only the agent's evidence decides, as for a real VM) runs
// tests/vm/campaign/contract.yaml twice under `harness run`, and the test does to it what each
// scenario says, once the runner has recorded the case in that phase (or said that it waits):
//   - reboot mid-pressure (run 1): the guest's power is cut (qemu SIGKILLed) and, once the
//     runner has recorded the agent's silence, the same qemu command line is started again on
//     the same data disk, so the guest boots anew with its state: the case is lost, its attempt
//     records the boot it ran on and the new one, it is never rerun, and the restarted agent
//     marks the VM unclean naming the case ("Agent restart" in harness/agent/API.md), so the
//     runner leaves the other cases pending and the run exits 2;
//   - between the runs the test clears the mark (DELETE /v1/unclean) and submits a case of its
//     own, which the agent runs;
//   - unclean mark, then busy (run 2): the runner's POST gets 409 busy and it waits; once its
//     output says so the test cancels its own case, and the runner's case runs and completes;
//   - death in warmup (run 2): the guest's qemu is SIGKILLed and, once the runner has recorded
//     the agent's silence, `harness vm reboot vm0` boots a fresh guest (new data disk, same
//     address and token): the attempt is infra_failed, the case is rerun on the new boot and
//     completes, and the report counts the case once (the failed attempt only in its attempts
//     audit); the run exits 0 (a lost case is an outcome, docs/PROTOCOL.md "Case status").
// Then each campaign scenario (a refused spec, a lost bundle) runs on a DB of its own on the same
// guest. Everything is judged by the contract's functions, the fake side's judges
// (tests/unit/campaign/runner_contract_test.cpp).
#include "harness/agent/client/client.hpp"
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
    std::printf("boot, two runs of the campaign, faults and the campaign scenarios: %.0f s wall\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    vm_->harness("vm down vm0");
    if (setup_error_.empty()) seen_.report = ct::analyse(db_, vm_->dir + "/report");
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
  /// A client of the guest's agent (the fleet's url and token file).
  static harness::agent::AgentClient agent() {
    const auto g = harness::vm::fleet_list(vm_->xdg + "/reclaim-harness");
    if (g.size() != 1u) throw std::runtime_error("not one guest in the fleet");
    return harness::agent::AgentClient::from_token_file(g[0].url, g[0].token_file);
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
    if (!test_support::wait_for_db(db_, ct::silence_recorded_sql(ordinal), std::chrono::seconds(120)))
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

  /// The foreign case of Fault::BusyAtSubmission: waits until the runner's output since `from`
  /// (a byte offset of the log) says it waits for the busy agent, cancels that case and waits
  /// until the agent ends it; its final state goes into seen_.foreign_state. "" when done.
  static std::string release_busy(std::size_t from) {
    const auto& vm = *vm_;
    if (!test_support::wait_until([&] { return test_support::slurp(vm.log).find(ct::busy_line(), from) != std::string::npos; },
                                  std::chrono::minutes(3), std::chrono::milliseconds(200)))
      return "the runner never said it waits for the busy agent within 3 min";
    auto a = agent();
    if (const auto c = a.cancel(ct::foreign_case_id()); !c.ok()) return "cancel of the foreign case: " + c.message();
    if (!test_support::wait_until([&] { const auto st = a.status(ct::foreign_case_id()); return st.ok() && st.value().finished(); },
                                  std::chrono::minutes(3), std::chrono::milliseconds(500)))
      return "the foreign case did not end within 3 min of its cancel";
    seen_.foreign_state = a.status(ct::foreign_case_id()).value().state;
    std::printf("the runner waited for the busy agent; the foreign case ended %s\n", seen_.foreign_state.c_str());
    std::fflush(stdout);
    return "";
  }

  /// Run `run_no` of the contract campaign in the background, each of its scenarios' faults
  /// applied once the runner has recorded its case in the fault's phase (or said it waits); its
  /// exit code into `rc`; "" when all of that happened.
  static std::string campaign_run(int run_no, const std::string& hosts, int& rc) {
    const auto& vm = *vm_;
    const std::size_t from = test_support::slurp(vm.log).size();
    const pid_t runner = vm.spawn_harness({"run", ct::campaign_file(), db_, "--hosts", hosts, "--plain"});
    auto stop_runner = [&](const std::string& why) {
      kill(runner, SIGKILL);
      waitpid(runner, nullptr, 0);
      return why;
    };
    for (const auto& s : ct::scenarios()) {
      if (s.run != run_no || s.fault == ct::Fault::None) continue;
      if (s.fault == ct::Fault::BusyAtSubmission) {
        if (auto err = release_busy(from); !err.empty()) return stop_runner("scenario '" + s.name + "': " + err);
        continue;
      }
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
      return stop_runner("run " + std::to_string(run_no) + " did not finish within 10 min of the last fault");
    rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (run_no == 2) run2_output_ = test_support::slurp(vm.log).substr(from);
    return "";
  }

  /// Boots the guest, runs the campaign twice with the test's actions between, then each campaign
  /// scenario; "" when all of that happened.
  static std::string run() {
    const auto t0 = std::chrono::steady_clock::now();
    auto stage = [&](const char* what) {
      std::printf("%s: %.0f s after the start\n", what,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      std::fflush(stdout);
    };
    const auto listed = test_support::boot_listed_guest(*vm_);
    if (!listed.error.empty()) return listed.error;
    stage("guest booted");
    if (auto err = campaign_run(1, listed.hosts_file, run_rc_[0]); !err.empty()) return "run 1: " + err;
    stage("run 1 ended");
    try {
      auto a = agent();
      seen_.first = ct::after_first_run(db_, a);
      if (const auto c = a.clear_unclean(); !c.ok()) return "DELETE /v1/unclean after run 1: " + c.message();
      if (const auto p = a.submit(ct::foreign_spec(db_)); !p.ok()) return "POST of the foreign case: " + p.message();
    } catch (const std::exception& e) {
      return std::string("between the runs: ") + e.what();
    }
    stage("mark cleared, foreign case submitted");
    if (auto err = campaign_run(2, listed.hosts_file, run_rc_[1]); !err.empty()) return "run 2: " + err;
    stage("run 2 ended");
    try {
      seen_.health_after = agent().health().value();
    } catch (const std::exception& e) {
      return std::string("GET /v1/health after run 2: ") + e.what();
    }
    seen_.run2_output = run2_output_;
    for (const auto& s : ct::campaign_scenarios()) {
      const std::string sdb = vm_->dir + "/" + s.file.substr(s.file.rfind('/') + 1) + ".db";
      scenario_rc_.push_back(vm_->harness("run " + s.file + " " + sdb + " --hosts " + listed.hosts_file + " --plain").code);
      stage(("campaign scenario '" + s.name + "' ended").c_str());
    }
    return "";
  }

  static inline std::unique_ptr<test_support::CampaignVm> vm_;
  static inline std::string db_, setup_error_, run2_output_;
  static inline int run_rc_[2] = {-1, -1};
  static inline std::vector<int> scenario_rc_;
  static inline ct::Observed seen_;
};

}  // namespace

TEST_F(ContractVm, TheRealAgentKeepsTheContract) { ct::expect_contract(db_, seen_); }

// Run 1 ends with cases pending on an unusable VM: the run could not finish (exit 2, docs/OUTPUTS.md
// "Exit codes"); run 2 finishes every case, a lost one included: an outcome, exit 0.
TEST_F(ContractVm, PendingOnAnUnusableVmExitsTwoALostCaseIsAnOutcome) {
  EXPECT_EQ(run_rc_[0], 2) << "see " << vm_->log;
  EXPECT_EQ(run_rc_[1], 0) << "see " << vm_->log;
}

TEST_F(ContractVm, TheRealAgentKeepsTheCampaignScenarios) {
  ASSERT_EQ(scenario_rc_.size(), ct::campaign_scenarios().size());
  for (std::size_t i = 0; i < scenario_rc_.size(); ++i) {
    const auto& s = ct::campaign_scenarios()[i];
    // Cases left infra_failed: exit 2; every case lost: an outcome, exit 0.
    EXPECT_EQ(scenario_rc_[i], s.status == "infra_failed" ? 2 : 0) << s.name << "; see " << vm_->log;
    ct::expect_campaign_scenario(s, vm_->dir + "/" + s.file.substr(s.file.rfind('/') + 1) + ".db");
  }
}
