// `harness calibrate run --hosts` (harness/calibrate/remote.hpp): the grid's cases through an
// agent, against a fake agent on 127.0.0.1: submitted once each, bundles downloaded, a rerun
// resumes (nothing resubmitted), a killed run's case is followed not resubmitted, a busy agent
// is waited for, a refused token stops the run; then the real CLI with a hosts file.
#include "harness/calibrate/remote.hpp"

#include "harness/calibrate/grid.hpp"
#include "tests/common/fake_agent.hpp"
#include "tests/common/run_harness.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
namespace hc = harness::calibrate;
using ::testing::HasSubstr;

harness::agent::ClientOptions fast() {
  harness::agent::ClientOptions o;
  o.connect_timeout = std::chrono::milliseconds(2000);
  o.request_timeout = std::chrono::milliseconds(5000);
  o.backoff = std::chrono::milliseconds(10);
  return o;
}

hc::RemoteOptions quick() {
  hc::RemoteOptions o;
  o.poll = std::chrono::milliseconds(5);
  o.case_timeout = std::chrono::seconds(60);
  o.progress = nullptr;
  return o;
}

std::vector<hc::RemoteCase> two_cases(const std::string& key) {
  hc::GridOptions g;
  g.pressure_s = 5;
  std::vector<hc::RemoteCase> out;
  for (const auto& p : hc::make_grid({320}, {128}, {0.25, 0.5}, {300})) {
    auto spec = hc::spec_for(p, g);
    spec["case_id"] = hc::run_case_id(p.name(), key);
    out.push_back({spec["case_id"], spec, "calib-" + p.name() + ".db"});
  }
  return out;
}

struct Remote : ::testing::Test {
  fs::path dir = fs::temp_directory_path() / ("calib-remote-" + std::to_string(::getpid()) + "-" +
                                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
  void SetUp() override { fs::remove_all(dir); }
  void TearDown() override { fs::remove_all(dir); }
};

TEST_F(Remote, CaseIdsAreUniqueToTheGridAndStableForOneCommand) {
  const auto a = hc::run_case_id("a320-s128-v250-m300", "grid-1\n/out/x");
  EXPECT_TRUE(std::regex_match(a, std::regex("calib-a320-s128-v250-m300-[0-9a-f]{8}"))) << a;
  EXPECT_EQ(a, hc::run_case_id("a320-s128-v250-m300", "grid-1\n/out/x"));
  EXPECT_NE(a, hc::run_case_id("a320-s128-v250-m300", "grid-2\n/out/x"));
  EXPECT_NE(a, hc::run_case_id("a320-s128-v250-m300", "grid-1\n/out/y"));
}

TEST_F(Remote, EachCaseSubmittedOnceAndItsBundleDownloaded) {
  fake::FakeAgent agent((dir / "agent").string(), "tok");
  agent.polls_to_finish = 2;
  harness::agent::AgentClient c(agent.url(), "tok", "", fast());
  const auto cases = two_cases("k");
  const auto r = hc::run_through_agent(c, cases, (dir / "bundles").string(), quick());
  ASSERT_EQ(r.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(r[i].result, "downloaded") << r[i].detail;
    EXPECT_EQ(r[i].detail, "completed");
    EXPECT_TRUE(fs::is_regular_file(dir / "bundles" / cases[i].bundle_file));
    EXPECT_EQ(agent.submissions()[cases[i].case_id], 1);
  }
  EXPECT_EQ(agent.bundle_downloads.load(), 2);

  // The same command again: both bundles are there, nothing is submitted or downloaded.
  const int posts = agent.posts();
  const auto again = hc::run_through_agent(c, cases, (dir / "bundles").string(), quick());
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].result, "skipped");
  EXPECT_EQ(again[1].result, "skipped");
  EXPECT_EQ(agent.posts(), posts);
  EXPECT_EQ(agent.bundle_downloads.load(), 2);
}

TEST_F(Remote, AKilledRunsCaseIsFollowedNotSubmittedAgain) {
  fake::FakeAgent agent((dir / "agent").string(), "tok");
  agent.polls_to_finish = 2;
  harness::agent::AgentClient c(agent.url(), "tok", "", fast());
  const auto cases = two_cases("k");
  ASSERT_TRUE(c.submit(cases[0].spec).ok());  // an earlier run submitted it, then was killed before the bundle
  const auto r = hc::run_through_agent(c, cases, (dir / "bundles").string(), quick());
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].result, "downloaded") << r[0].detail;
  EXPECT_EQ(agent.submissions()[cases[0].case_id], 1);
  EXPECT_EQ(r[1].result, "downloaded") << r[1].detail;
  EXPECT_TRUE(fs::is_regular_file(dir / "bundles" / cases[0].bundle_file));
}

// Busy as the agent is (tests/common/runner_contract.hpp holds the fake to it): it runs a case of
// someone else's, and every POST gets 409 until that case has ended.
TEST_F(Remote, AnAgentBusyWithAnotherCaseIsWaitedFor) {
  fake::FakeAgent agent((dir / "agent").string(), "tok");
  agent.polls_to_finish = 1;
  harness::agent::AgentClient c(agent.url(), "tok", "", fast());
  const auto cases = two_cases("k");
  auto other = cases[0].spec;
  other["case_id"] = "foreign";
  ASSERT_TRUE(c.submit(other).ok());
  std::vector<hc::RemoteResult> r;
  std::thread run([&] { r = hc::run_through_agent(c, cases, (dir / "bundles").string(), quick()); });
  const bool waited = test_support::wait_until([&] { return agent.posts() >= 1 + 3; }, std::chrono::seconds(60));
  EXPECT_TRUE(c.cancel("foreign").ok());  // the other case ends: the agent is free
  run.join();
  ASSERT_TRUE(waited) << "no three 409s";
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].result, "downloaded") << r[0].detail;
  EXPECT_EQ(r[1].result, "downloaded") << r[1].detail;
  EXPECT_EQ(agent.submissions()[cases[0].case_id], 1);
}

TEST_F(Remote, AgentBusyPastTheTimeoutFailsThatCaseOnly) {
  fake::FakeAgent agent((dir / "agent").string(), "tok");
  agent.polls_to_finish = 1;
  harness::agent::AgentClient c(agent.url(), "tok", "", fast());
  auto other = two_cases("k")[0].spec;
  other["case_id"] = "foreign";
  ASSERT_TRUE(c.submit(other).ok());  // never ends: never free
  auto o = quick();
  o.case_timeout = std::chrono::seconds(1);
  const auto r = hc::run_through_agent(c, two_cases("k"), (dir / "bundles").string(), o);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].result, "failed");
  EXPECT_THAT(r[0].detail, HasSubstr("agent busy past the case timeout"));
  EXPECT_EQ(r[1].result, "failed");
  EXPECT_FALSE(fs::exists(dir / "bundles" / two_cases("k")[0].bundle_file));
}

TEST_F(Remote, ARefusedTokenStopsTheRunNamingTheAgent) {
  fake::FakeAgent agent((dir / "agent").string(), "right");
  harness::agent::AgentClient c(agent.url(), "wrong", "/etc/harness/token", fast());
  try {
    hc::run_through_agent(c, two_cases("k"), (dir / "bundles").string(), quick());
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr(agent.url() + ": token refused"));
  }
  EXPECT_TRUE(agent.submissions().empty());
}

// The real CLI: `harness calibrate run --hosts FILE --host vm1` runs the grid on vm1's agent
// (vm0's agent sees nothing), prints the table, records where it ran; a rerun resubmits nothing.
TEST_F(Remote, CliRunsTheGridOnTheNamedHostOfAHostsFile) {
  fake::FakeAgent vm0((dir / "agent0").string(), "tok0");
  fake::FakeAgent vm1((dir / "agent1").string(), "tok1");
  vm1.polls_to_finish = 1;
  fs::create_directories(dir);
  for (const auto& [name, tok] : {std::pair<std::string, std::string>{"t0", "tok0"}, {"t1", "tok1"}}) {
    std::ofstream(dir / name) << tok << "\n";
    ::chmod((dir / name).c_str(), 0600);
  }
  std::ofstream(dir / "hosts.yaml") << "hosts:\n"
                                    << "  - {name: vm0, url: \"" << vm0.url() << "\", token_file: " << (dir / "t0").string()
                                    << "}\n"
                                    << "  - {name: vm1, url: \"" << vm1.url() << "\", token_file: " << (dir / "t1").string()
                                    << "}\n";
  const std::string args = "calibrate run --out " + (dir / "out").string() + " --hosts " + (dir / "hosts.yaml").string() +
                           " --host vm1 --allocation-mib 320 --slide-mib-s 0.25,0.5 --pressure-s 5 --warmup-s 1 "
                           "--recovery-s 1";
  const auto r = test_support::run_harness(args, dir / "log1");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("2 cases on vm1 (" + vm1.url() + ")"));
  EXPECT_THAT(r.out, HasSubstr("320 MiB / 128 MiB / 0.25 MiB/s / 300 MiB"));
  EXPECT_THAT(r.out, HasSubstr("320 MiB / 128 MiB / 0.5 MiB/s / 300 MiB"));
  EXPECT_TRUE(vm0.submissions().empty());
  const auto subs = vm1.submissions();
  ASSERT_EQ(subs.size(), 2u);
  for (const auto& [id, n] : subs) {
    EXPECT_TRUE(std::regex_match(id, std::regex("calib-a320-s128-v(250|500)-m300-[0-9a-f]{8}"))) << id;
    EXPECT_EQ(n, 1);
  }
  EXPECT_TRUE(fs::is_regular_file(dir / "out" / "collect" / "bundles" / "calib-a320-s128-v250-m300.db"));
  EXPECT_TRUE(fs::is_regular_file(dir / "out" / "table.md"));
  EXPECT_FALSE(fs::exists(dir / "out" / "script.sh"));  // the local guest's script: not written
  std::ifstream g(dir / "out" / "grid.json");
  const auto grid = nlohmann::json::parse(g);
  EXPECT_EQ(grid.at("ran_on").at("host"), "vm1");
  EXPECT_EQ(grid.at("ran_on").at("url"), vm1.url());

  const int posts = vm1.posts();
  const auto again = test_support::run_harness(args, dir / "log2");
  EXPECT_EQ(again.code, 0) << again.out;
  EXPECT_THAT(again.out, HasSubstr("bundle already there, not rerun"));
  EXPECT_EQ(vm1.posts(), posts);

  const auto unknown = test_support::run_harness(
      "calibrate run --out " + (dir / "out2").string() + " --hosts " + (dir / "hosts.yaml").string() + " --host vm7",
      dir / "log3");
  EXPECT_EQ(unknown.code, 2) << unknown.out;
  EXPECT_THAT(unknown.out, HasSubstr("no host named 'vm7'"));
}

}  // namespace
