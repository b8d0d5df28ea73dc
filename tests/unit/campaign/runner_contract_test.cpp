// The runner contract (tests/common/runner_contract.hpp) against the fake agent: the campaign
// tests/vm/campaign/contract.yaml on one fake agent, each scenario's fault applied once the
// fake holds that case in the fault's phase (the guest gone: every request answered 503 until
// the runner has met the silence; then FakeAgent::replace_guest() or reboot()), and the DB, the
// agent's health after the run and the report judged by expect_contract(), as the real side
// (tests/vm/campaign/contract_vm_test.cpp) is. Only the pace differs: polls every 20 ms and a
// 200 ms silence before pressure instead of the campaign's 500 ms and 60 s.
#include "harness/agent/client.hpp"
#include "harness/campaign/campaign.hpp"
#include "harness/campaign/runner.hpp"

#include "tests/common/fake_agent.hpp"
#include "tests/common/runner_contract.hpp"
#include "tests/common/wait_until.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <thread>

#include "test_files.hpp"

namespace hc = harness::campaign;
namespace ct = test_support::contract;
using testfiles::TempDir;
using testfiles::write_token;

namespace {

TEST(RunnerContract, TheFakeAgentKeepsTheRealAgentsContract) {
  TempDir d;
  write_token(d / "token", "tok");
  fake::FakeAgent a0(d / "agent0", "tok");
  a0.polls_to_finish = 5;  // setup, warmup, pressure, recovery, restoration
  a0.set_boot_id("fake-boot-1");
  // One VM runs its cases in schedule order: the k-th case first submitted is ordinal k - 1.
  // Each faulted case is held in its fault's phase on its first submission.
  std::vector<std::string> order;  // written by the fake's server thread only, under its lock
  a0.hold_in = [&](const std::string& base, int n) -> std::string {
    auto it = std::find(order.begin(), order.end(), base);
    if (it == order.end()) it = order.insert(order.end(), base);
    const int ordinal = static_cast<int>(it - order.begin());
    for (const auto& s : ct::scenarios())
      if (s.ordinal == ordinal && n == 1) return ct::fault_phase(s.fault);
    return "";
  };
  std::ofstream(d / "hosts.yaml") << "hosts:\n  - name: vm0\n    url: " << a0.url() << "\n    token_file: "
                                  << std::string(d / "token") << "\n    accelerator: real\n    local: false\n";
  auto c = hc::load_campaign(ct::campaign_file());
  c.poll_interval_ms = 20;
  hc::RunOptions o;
  o.db_path = d / "c.db";
  o.hosts_file = d / "hosts.yaml";
  o.progress_tty = 0;
  o.silence.before_pressure = std::chrono::milliseconds(200);
  o.host_wait.first_backoff_ms = 50;

  hc::RunSummary sum;
  std::thread run([&] { sum = hc::run_campaign(c, o); });
  std::vector<std::string> faults_missed;
  int boot = 1;
  for (const auto& s : ct::scenarios()) {
    if (s.fault == ct::Fault::None) continue;
    if (!a0.wait_until_held(std::chrono::seconds(60))) {
      faults_missed.push_back(s.name + ": the case was never held in " + ct::fault_phase(s.fault));
      a0.release_hold();
      continue;
    }
    // The guest is gone: nothing answers until the runner has asked 4 times and 5x the
    // pre-pressure silence passed (as a dead guest's agent is silent for its whole reboot).
    const int before = a0.silent_answers.load();
    const auto t0 = std::chrono::steady_clock::now();
    a0.silent = true;
    if (!test_support::wait_until(
            [&] {
              return a0.silent_answers.load() >= before + 4 &&
                     std::chrono::steady_clock::now() - t0 > 5 * o.silence.before_pressure;
            },
            std::chrono::seconds(60)))
      faults_missed.push_back(s.name + ": the runner never met the silence");
    const std::string next = "fake-boot-" + std::to_string(++boot);
    if (s.fault == ct::Fault::DeathInWarmup) a0.replace_guest(next);
    else a0.reboot(next);
    a0.silent = false;
    a0.release_hold();
  }
  run.join();
  ASSERT_TRUE(faults_missed.empty()) << faults_missed.front();
  auto agent = harness::agent::AgentClient::from_token_file(a0.url(), d / "token");
  const auto health = agent.health().value();
  const auto report = ct::analyse(d / "c.db", d / "report");
  ct::expect_contract(d / "c.db", health, ct::settled_state(agent, health), report);
  EXPECT_EQ(sum.pending, 0);
  EXPECT_TRUE(sum.unusable.empty()) << sum.unusable.front();
}

}  // namespace
