// The runner contract (tests/common/runner_contract.hpp) against the fake agent: the campaign
// tests/vm/campaign/contract.yaml run twice on one fake agent, each scenario's fault applied once
// the fake holds that case in the fault's phase (the guest gone: every request answered 503 until
// the runner has recorded the silence; then FakeAgent::reboot() or replace_guest()) or, for the busy
// agent, once the runner's output says it waits; between the runs the test clears the unclean
// mark and submits its own case; then each campaign scenario on a DB of its own. The DBs, the
// agent's health and the report are judged by the contract's functions, as the real side's
// (tests/vm/campaign/contract_vm_test.cpp) are. Only the pace differs: polls every 20 ms and a
// 200 ms silence before pressure instead of the campaign's 500 ms and 60 s.
#include "harness/agent/client/client.hpp"
#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/runner/runner.hpp"
#include "harness/campaign/plan/schedule.hpp"

#include "tests/common/fake_agent.hpp"
#include "tests/common/runner_contract.hpp"
#include "tests/common/wait_until.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <thread>

#include "test_files.hpp"

namespace hc = harness::campaign;
namespace ct = test_support::contract;
using testfiles::TempDir;
using testfiles::write_token;

namespace {

/// A `harness run` of the contract's campaigns on one fake agent, in a thread of the test.
struct FakeSide {
  TempDir d;
  fake::FakeAgent a0{d / "agent0", "tok"};
  hc::RunOptions o;
  std::map<std::string, int> ordinal_of;  ///< schedule case id -> ordinal (contract.yaml)
  std::string foreign_state;              ///< the foreign case's final state, read after its cancel

  FakeSide() {
    write_token(d / "token", "tok");
    a0.polls_to_finish = 5;  // setup, warmup, pressure, recovery, restoration
    a0.set_boot_id("fake-boot-1");
    std::ofstream(d / "hosts.yaml") << "hosts:\n  - name: vm0\n    url: " << a0.url() << "\n    token_file: "
                                    << std::string(d / "token") << "\n    accelerator: real\n    local: false\n";
    for (const auto& k : hc::plan(campaign()).cases) ordinal_of[k.case_id] = k.ordinal;
    // A faulted case is held in its fault's phase on its first submission.
    a0.hold_in = [this](const std::string& base, int n) -> std::string {
      const auto it = ordinal_of.find(base);
      if (it == ordinal_of.end() || n != 1) return "";
      for (const auto& s : ct::scenarios())
        if (s.ordinal == it->second) return ct::fault_phase(s.fault);
      return "";
    };
    o.hosts_file = d / "hosts.yaml";
    o.progress_tty = 0;
    o.silence.before_pressure = std::chrono::milliseconds(200);
    o.host_wait.first_backoff_ms = 50;
  }
  static hc::Campaign campaign(const std::string& file = ct::campaign_file()) {
    auto c = hc::load_campaign(file);
    c.poll_interval_ms = 20;
    return c;
  }
  harness::agent::AgentClient client() { return harness::agent::AgentClient::from_token_file(a0.url(), d / "token"); }

  /// Runs `file` on `db` in a thread, with its progress output in `log` (unbuffered, so that the
  /// test can read it while the runner writes), and applies the faults of the scenarios of `run`;
  /// the faults that could not be applied, as messages.
  std::vector<std::string> run(const std::string& file, const std::string& db, const std::string& log, int run_no) {
    o.db_path = db;
    std::FILE* out = std::fopen(log.c_str(), "w");
    std::setvbuf(out, nullptr, _IONBF, 0);
    o.out = out;
    hc::RunSummary sum;
    std::thread t([&] { sum = hc::run_campaign(campaign(file), o); });
    std::vector<std::string> missed;
    int boot = run_no == 1 ? 1 : 2;
    for (const auto& s : ct::scenarios()) {
      if (s.run != run_no || s.fault == ct::Fault::None || file != ct::campaign_file()) continue;
      if (s.fault == ct::Fault::BusyAtSubmission) {
        if (!test_support::wait_until([&] { return test_support::slurp(log).find(ct::busy_line()) != std::string::npos; },
                                      std::chrono::seconds(60)))
          missed.push_back(s.name + ": the runner never said it waits for the busy agent");
        auto agent = client();
        if (!agent.cancel(ct::foreign_case_id()).ok()) missed.push_back(s.name + ": the foreign case's cancel failed");
        const auto st = agent.status(ct::foreign_case_id());
        foreign_state = st.ok() ? st.value().state : st.message();
        continue;
      }
      if (!a0.wait_until_held(std::chrono::seconds(60))) {
        missed.push_back(s.name + ": the case was never held in " + ct::fault_phase(s.fault));
        a0.release_hold();
        continue;
      }
      // The guest is gone: nothing answers until the runner has recorded the silence, as the
      // real side keeps its guest down.
      a0.silent = true;
      if (!test_support::wait_for_db(db, ct::silence_recorded_sql(s.ordinal), std::chrono::seconds(60)))
        missed.push_back(s.name + ": the runner never recorded the silence");
      const std::string next = "fake-boot-" + std::to_string(++boot);
      if (s.fault == ct::Fault::DeathInWarmup) a0.replace_guest(next);
      else a0.reboot(next);
      a0.silent = false;
      a0.release_hold();
    }
    t.join();
    std::fclose(out);
    o.out = stderr;
    EXPECT_EQ(sum.pending, run_no == 1 && file == ct::campaign_file() ? 2 : 0);
    return missed;
  }
};

TEST(RunnerContract, TheFakeAgentKeepsTheRealAgentsContract) {
  FakeSide f;
  const std::string db = f.d / "c.db";
  auto missed = f.run(ct::campaign_file(), db, f.d / "run1.log", 1);
  ASSERT_TRUE(missed.empty()) << missed.front();
  auto agent = f.client();
  ct::Observed seen;
  seen.first = ct::after_first_run(db, agent);
  // The operator's fix, and the test's own case that keeps the agent busy.
  ASSERT_TRUE(agent.clear_unclean().ok());
  ASSERT_EQ(agent.submit(ct::foreign_spec(db)).value(), ct::foreign_case_id());
  missed = f.run(ct::campaign_file(), db, f.d / "run2.log", 2);
  ASSERT_TRUE(missed.empty()) << missed.front();
  seen.health_after = agent.health().value();
  seen.foreign_state = f.foreign_state;
  seen.run2_output = test_support::slurp(f.d / "run2.log");
  seen.report = ct::analyse(db, f.d / "report");
  ct::expect_contract(db, seen);
  for (const auto& s : ct::campaign_scenarios()) {
    f.a0.outcome = [&](const std::string&, int) {
      return s.executor_lost ? fake::Outcome::LostBundle : fake::Outcome::Completed;
    };
    const std::string sdb = f.d / (s.file.substr(s.file.rfind('/') + 1) + ".db");
    EXPECT_TRUE(f.run(s.file, sdb, sdb + ".log", 1).empty());
    ct::expect_campaign_scenario(s, sdb);
  }
}

}  // namespace
