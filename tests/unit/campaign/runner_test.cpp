// The campaign runner against fake agents on 127.0.0.1: VMs in parallel, OOM kept and not
// retried, infra failures retried and every attempt recorded, tampered schedule refused,
// resume after kill -9 of `harness run` with no loss and no duplicate; lost after the
// pressure phase started is an outcome (not rerun), lost before it is rerun; mark-infra;
// fleet qualification before scheduling.
#include "harness/agent/client/client.hpp"
#include "harness/campaign/check/assertions.hpp"
#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/store/campaign_db.hpp"
#include "harness/campaign/store/export.hpp"
#include "harness/campaign/runner/preflight.hpp"
#include "harness/campaign/runner/runner.hpp"
#include "harness/campaign/plan/schedule.hpp"
#include "harness/campaign/commands/status.hpp"

#include "tests/common/fake_agent.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "test_files.hpp"
#include "tests/common/db_query.hpp"
#include "tests/common/run_harness.hpp"
#include "tests/common/small_campaign.hpp"
#include "tests/common/wait_until.hpp"

namespace hc = harness::campaign;
using testfiles::TempDir;
using testfiles::write;
using testfiles::write_token;
using test_support::run_harness;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

/// A small campaign on `vms` hosts: 1 regime, `repeats` triplets per VM.
std::string campaign_yaml(int vms, int repeats, int retries, const std::string& extra = "") {
  std::string v;
  for (int i = 0; i < vms; ++i) v += (i ? ", vm" : "vm") + std::to_string(i);
  return test_support::small_campaign_yaml("{kind: hosts, vms: [" + v + "]}",
                                           "repeats: " + std::to_string(repeats) + ", dose_mib: 96",
                                           "runner: {max_infra_retries: " + std::to_string(retries) +
                                               ", poll_interval_ms: 20}\n" + extra);
}

std::string hosts_yaml(const std::vector<const fake::FakeAgent*>& agents, const std::string& token_file) {
  std::string s = "hosts:\n";
  for (std::size_t i = 0; i < agents.size(); ++i)
    s += "  - name: vm" + std::to_string(i) + "\n    url: " + agents[i]->url() + "\n    token_file: " + token_file +
         "\n    accelerator: real\n    local: false\n";
  return s;
}

std::int64_t count(results::Db& db, const std::string& sql) {
  results::Stmt q(db, sql);
  q.step();
  return q.int64(0);
}

std::string text(results::Db& db, const std::string& sql) {
  results::Stmt q(db, sql);
  if (!q.step() || q.is_null(0)) return "(none)";
  return q.text(0);
}

/// Writes `d`/hosts.yaml for `agents` (token file `d`/token, written by the caller) and
/// `d`/t.yaml = `yaml`; returns the loaded campaign.
hc::Campaign fleet_campaign(const TempDir& d, const std::vector<const fake::FakeAgent*>& agents,
                            const std::string& yaml) {
  write(d / "hosts.yaml", hosts_yaml(agents, d / "token"));
  write(d / "t.yaml", yaml);
  return hc::load_campaign(d / "t.yaml");
}

/// Options of a run in `d`: DB `d`/c.db, hosts file `d`/hosts.yaml, no progress display.
hc::RunOptions run_options(const TempDir& d) {
  hc::RunOptions o;
  o.db_path = d / "c.db";
  o.hosts_file = d / "hosts.yaml";
  o.progress_tty = 0;
  return o;
}

/// One VM, one triplet, polls walking setup, warmup, pressure, recovery, restoration.
struct OneVm {
  TempDir d;
  fake::FakeAgent a0{d / "agent0", "tok"};
  hc::Campaign c;
  hc::RunOptions o;
  explicit OneVm(int retries = 2) {
    write_token(d / "token", "tok");
    a0.polls_to_finish = 5;
    c = fleet_campaign(d, {&a0}, campaign_yaml(1, 1, retries));
    o = run_options(d);
  }
};

/// Runs `v`'s campaign while the guest of case `id` dies in `phase` ("warmup", "pressure") on
/// its first submission, as the runner contract's real side has a guest die
/// (tests/common/runner_contract.hpp, which holds the fake to the real agent): the case held
/// there, the agent silent until the runner has recorded the silence in the attempt, then a fresh
/// guest at the same address that knows no case (FakeAgent::replace_guest), whose 404 decides.
/// The run's summary; `met` says whether the runner recorded the silence.
hc::RunSummary run_with_guest_death(OneVm& v, const std::string& id, const std::string& phase, bool& met) {
  v.a0.set_boot_id("boot-1");
  v.o.silence.before_pressure = std::chrono::milliseconds(200);
  v.a0.hold_in = [id, phase](const std::string& base, int n) { return base == id && n == 1 ? phase : ""; };
  hc::RunSummary s;
  std::thread run([&] { s = hc::run_campaign(v.c, v.o); });
  met = v.a0.wait_until_held(std::chrono::seconds(60));
  v.a0.silent = true;
  met = met && test_support::wait_for_db(v.o.db_path,
                                         "SELECT count(*) FROM attempts WHERE case_id = '" + id +
                                             "' AND json_array_length(detail_json, '$.silence.episodes') >= 1",
                                         std::chrono::seconds(60));
  v.a0.replace_guest("boot-2");
  v.a0.silent = false;
  v.a0.release_hold();
  run.join();
  v.a0.hold_in = nullptr;
  return s;
}

/// A valid spec the fake agent accepts as a case of someone else's (the agent runs one case at a
/// time: while it has not ended, every other POST gets 409 busy): the first planned case of `c`,
/// as `foreign`.
nlohmann::json foreign_spec(const hc::Campaign& c) {
  auto spec = hc::plan(c).cases.at(0).spec;
  spec["case_id"] = "foreign";
  return spec;
}

}  // namespace

TEST(Runner, TwoVmsInParallelOomKeptNotRetriedNothingRerun) {
  TempDir d;
  write_token(d / "token", "tok\n");
  fake::FakeAgent a0(d / "agent0", "tok"), a1(d / "agent1", "tok");
  const std::string oom_case = "t-vm0-fast-structured-r1-bounded-reclaim";
  a0.outcome = [&](const std::string& id, int) { return id == oom_case ? fake::Outcome::Oom : fake::Outcome::Completed; };
  const auto c = fleet_campaign(d, {&a0, &a1},
                                campaign_yaml(2, 2, 2,
                                              "assertions:\n  - kind: all_cases_completed\n  - kind: no_foreground_oom\n"
                                              "  - {kind: reclaim_achieved_ratio, min: 0.8}\n  - {kind: trigger_within_s, max: 5}\n"
                                              "  - kind: restoration_clean\n  - {kind: canary_p99_ms, max: 50}\n"));
  const auto o = run_options(d);
  const auto s = hc::run_campaign(c, o);
  EXPECT_EQ(s.planned, 12);
  EXPECT_EQ(s.completed, 12);
  EXPECT_EQ(s.attempts_this_run, 12);
  for (auto* a : {&a0, &a1}) {
    const auto subs = a->submissions();
    EXPECT_EQ(subs.size(), 6u);
    for (const auto& [id, n] : subs) EXPECT_EQ(n, 1) << id;
  }
  {
    results::Db db(o.db_path, results::Db::Mode::ReadOnly);
    EXPECT_EQ(count(db, "SELECT count(*) FROM attempts"), 12);
    EXPECT_EQ(count(db, "SELECT count(*) FROM cases WHERE status = 'completed'"), 12);
    EXPECT_EQ(count(db, "SELECT count(*) FROM canary_requests"), 12 * 40);
    // The OOM case is an outcome: completed, one attempt, its OOM telemetry kept.
    EXPECT_EQ(count(db, "SELECT count(*) FROM attempts WHERE case_id = '" + oom_case + "'"), 1);
    EXPECT_EQ(count(db, "SELECT max(fg_oom_kill) FROM telemetry WHERE case_id = '" + oom_case + "'"), 1);
    EXPECT_THAT(hc::status_report(db), HasSubstr("12 completed, 0 lost, 0 infra_failed, 0 pending"));
    EXPECT_THAT(hc::status_report(db), HasSubstr("1 case(s) with OOM kills"));
    // CI assertions over the DB: only the foreground-OOM one fails, naming the case.
    const auto res = hc::evaluate_assertions(db, c);
    ASSERT_EQ(res.size(), 6u);
    for (const auto& r : res) {
      if (r.name == "no_foreground_oom") {
        EXPECT_FALSE(r.passed);
        ASSERT_EQ(r.failures.size(), 1u);
        EXPECT_THAT(r.failures[0], HasSubstr(oom_case));
      } else {
        EXPECT_TRUE(r.passed) << r.name << ": " << (r.failures.empty() ? "" : r.failures[0]);
      }
    }
    hc::write_junit(d / "junit.xml", c.name, res);
    const std::string xml = testfiles::read(d / "junit.xml");
    EXPECT_THAT(xml, HasSubstr("tests=\"6\" failures=\"1\""));
    EXPECT_THAT(xml, HasSubstr("<failure message=\"" + oom_case + ": 1 foreground OOM kill(s)\""));
    // Tidy CSV: header + one line per request, derived response time present.
    const auto files = hc::export_csv(db, d / "csv");
    EXPECT_EQ(files.size(), 9u);
    std::ifstream csv(d / "csv/canary_requests.csv");
    std::string header, line;
    std::getline(csv, header);
    EXPECT_THAT(header, HasSubstr("response_ns"));
    EXPECT_THAT(header, HasSubstr("deadline_miss"));
    int rows = 0;
    while (std::getline(csv, line)) ++rows;
    EXPECT_EQ(rows, 12 * 40);
  }
  // Run again: everything completed, nothing is submitted.
  const int posts = a0.posts() + a1.posts();
  const auto s2 = hc::run_campaign(c, o);
  EXPECT_EQ(s2.completed, 12);
  EXPECT_EQ(s2.attempts_this_run, 0);
  EXPECT_EQ(a0.posts() + a1.posts(), posts);
}

/// After a case's first status answer, the runner asks the agent to hold each answer until
/// the state or phase differs from the last one it saw (runner.status_wait_ms, default
/// 10000 ms; harness/agent/API.md "Waiting for a change"); 0 keeps plain polling. The fake
/// agent answers at once, as an agent without this does, and every case still completes.
TEST(Runner, StatusRequestsAskTheAgentToHoldTheAnswerUntilAChange) {
  for (const int wait_ms : {-1, 0}) {  // -1: the default
    TempDir d;
    write_token(d / "token", "tok");
    fake::FakeAgent a0{d / "agent0", "tok"};
    a0.polls_to_finish = 5;
    std::string yaml = campaign_yaml(1, 1, 0);
    if (wait_ms >= 0) {
      const std::string key = "poll_interval_ms: 20}";
      yaml.replace(yaml.find(key), key.size(), "poll_interval_ms: 20, status_wait_ms: " + std::to_string(wait_ms) + "}");
    }
    const auto c = fleet_campaign(d, {&a0}, yaml);
    EXPECT_EQ(c.status_wait_ms, wait_ms < 0 ? 10000 : wait_ms);
    const auto s = hc::run_campaign(c, run_options(d));
    EXPECT_EQ(s.completed, 3);
    const auto q = a0.status_queries();
    ASSERT_GE(q.size(), 3u * 6u) << "at least polls_to_finish + 1 status requests per case";
    int plain = 0, held = 0;
    const std::regex held_query("phase=(setup|warmup|pressure|recovery|restoration)&state=running&wait_ms=10000");
    for (const auto& x : q) {
      if (x.empty()) {
        ++plain;
      } else {
        ++held;
        EXPECT_TRUE(std::regex_match(x, held_query)) << x;
      }
    }
    if (wait_ms == 0) {
      EXPECT_EQ(held, 0);
    } else {
      // Two plain requests per case: the check before submission whether the agent already
      // knows the id (a 404 here), and the first one of following it; then held ones.
      EXPECT_EQ(plain, 6);
      EXPECT_GE(held, 3 * 4);
    }
  }
}

TEST(Runner, InfraFailureRetriedAndEveryAttemptRecorded) {
  TempDir d;
  write_token(d / "token", "tok");
  fake::FakeAgent a0(d / "agent0", "tok");
  const std::string flaky = "t-vm0-fast-structured-r1-bounded-reclaim";  // infra bundle once, then fine
  const std::string dead = "t-vm0-fast-structured-r1-static-zram";       // child dies in warmup every time
  a0.outcome = [&](const std::string& id, int n) {
    if (id == flaky && n == 1) return fake::Outcome::InfraBundle;
    if (id == dead) return fake::Outcome::InfraNoBundleInWarmup;
    return fake::Outcome::Completed;
  };
  const auto c = fleet_campaign(d, {&a0}, campaign_yaml(1, 1, 1));
  const auto o = run_options(d);
  const auto s = hc::run_campaign(c, o);
  EXPECT_EQ(s.completed, 2);
  EXPECT_EQ(s.infra_failed, 1);
  EXPECT_EQ(s.attempts_this_run, 5);  // flaky 2, dead 2 (1 + max_infra_retries), delayed 1
  EXPECT_EQ(a0.submissions()[flaky], 2);
  EXPECT_EQ(a0.submissions()[dead], 2);
  {
    results::Db db(o.db_path, results::Db::Mode::ReadOnly);
    results::Stmt q(db, "SELECT attempt, status, error FROM attempts WHERE case_id = ?1 ORDER BY attempt");
    q.bind(1, flaky);
    ASSERT_TRUE(q.step());
    EXPECT_EQ(q.int64(0), 1);
    EXPECT_EQ(q.text(1), "infra_failed");
    EXPECT_THAT(q.text(2), HasSubstr("pressure-gen did not start"));
    ASSERT_TRUE(q.step());
    EXPECT_EQ(q.int64(0), 2);
    EXPECT_EQ(q.text(1), "completed");
    EXPECT_FALSE(q.step());
    EXPECT_EQ(count(db, "SELECT attempt FROM cases WHERE case_id = '" + flaky + "'"), 2);
    EXPECT_EQ(count(db, "SELECT count(*) FROM schedule WHERE case_id = '" + flaky + "' AND state = 'completed'"), 1);
    // The attempt-2 bundle (submitted as <id>.a2) was imported under the case id.
    EXPECT_EQ(count(db, "SELECT count(*) FROM canary_requests WHERE case_id = '" + flaky + "'"), 40);
    EXPECT_EQ(count(db, "SELECT count(*) FROM attempts WHERE case_id = '" + dead + "' AND status = 'infra_failed'"), 2);
    EXPECT_EQ(count(db, "SELECT count(*) FROM schedule WHERE case_id = '" + dead + "' AND state = 'infra_failed'"), 1);
    EXPECT_THAT(hc::status_report(db), HasSubstr(dead + " (2 attempts): agent: fake: child died"));
  }
  // Retries exhausted: a second run leaves the dead case alone.
  const auto s2 = hc::run_campaign(c, o);
  EXPECT_EQ(s2.attempts_this_run, 0);
  EXPECT_EQ(a0.submissions()[dead], 2);
}

TEST(Runner, TamperedScheduleOrChangedCampaignRefused) {
  TempDir d;
  write_token(d / "token", "tok");
  fake::FakeAgent a0(d / "agent0", "tok");
  const auto c = fleet_campaign(d, {&a0}, campaign_yaml(1, 1, 0));
  const auto o = run_options(d);
  {
    results::Db db(o.db_path, results::Db::Mode::Create);
    hc::store_plan(db, c, hc::plan(c));
    db.exec("UPDATE schedule SET ordinal = 2 - ordinal");  // reverse the preregistered order
  }
  try {
    hc::run_campaign(c, o);
    ADD_FAILURE() << "tampered schedule was run";
  } catch (const hc::ScheduleTampered& e) {
    EXPECT_THAT(e.what(), HasSubstr("differs from the preregistered plan"));
  }
  EXPECT_EQ(a0.posts(), 0);
  // A changed campaign (other seed) against the planned DB is refused too.
  auto changed = c;
  changed.seed = 6;
  std::filesystem::remove(o.db_path);
  hc::run_campaign(c, o);
  EXPECT_THROW(hc::run_campaign(changed, o), hc::ScheduleTampered);
}

TEST(Runner, ResumeAfterKill9NoLossNoDuplicate) {
  const std::string harness = test_support::harness_binary();
  ASSERT_TRUE(std::filesystem::exists(harness)) << harness;
  TempDir d;
  write_token(d / "token", "tok");
  fake::FakeAgent a0(d / "agent0", "tok");
  a0.polls_to_finish = 6;  // ~6 x 20 ms poll per case
  a0.hold_submission = 5;  // the 5th case stays in its pressure phase until released
  write(d / "hosts.yaml", hosts_yaml({&a0}, d / "token"));
  write(d / "t.yaml", campaign_yaml(1, 4, 0));  // 12 cases on vm0
  const std::string db_path = d / "c.db";
  auto spawn = [&] {
    const pid_t pid = fork();
    if (pid == 0) {
      const std::string log = d / "run.log";
      freopen(log.c_str(), "a", stdout);
      freopen(log.c_str(), "a", stderr);
      execl(harness.c_str(), harness.c_str(), "run", (d / "t.yaml").c_str(), "--db", db_path.c_str(), "--hosts",
            (d / "hosts.yaml").c_str(), "--plain", static_cast<char*>(nullptr));
      _exit(127);
    }
    return pid;
  };
  auto completed = [&]() -> std::int64_t {
    if (!std::filesystem::exists(db_path)) return 0;
    try {
      results::Db db(db_path, results::Db::Mode::ReadOnly);
      return count(db, "SELECT count(*) FROM schedule WHERE state = 'completed'");
    } catch (const results::DbError&) {
      return 0;  // schema not there yet
    }
  };
  const pid_t first = spawn();
  // Kill once 4 cases are imported and the 5th is in flight on the agent (held there, so the
  // runner can go no further): the resumed runner must adopt it rather than submit it again.
  ASSERT_TRUE(a0.wait_until_held(std::chrono::seconds(120)))
      << "the 5th case was never followed in its pressure phase; run.log:\n" << test_support::slurp(d / "run.log");
  ASSERT_TRUE(test_support::wait_until([&] { return completed() >= 4; }, std::chrono::seconds(60)))
      << "the 4 cases before the held one were not imported; run.log:\n" << test_support::slurp(d / "run.log");
  ASSERT_EQ(kill(first, SIGKILL), 0);
  int st = 0;
  waitpid(first, &st, 0);
  ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) << "runner finished before it was killed";
  const auto at_kill = completed();
  EXPECT_EQ(at_kill, 4);
  EXPECT_EQ(a0.submissions().size(), 5u);
  a0.release_hold();

  std::printf("killed the runner with %lld of 12 cases imported, %zu submitted\n", static_cast<long long>(at_kill),
              a0.submissions().size());
  std::fflush(stdout);
  const pid_t second = spawn();
  waitpid(second, &st, 0);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 0);

  results::Db db(db_path, results::Db::Mode::ReadOnly);
  EXPECT_EQ(count(db, "SELECT count(*) FROM schedule WHERE state = 'completed'"), 12);
  EXPECT_EQ(count(db, "SELECT count(*) FROM cases"), 12);
  EXPECT_EQ(count(db, "SELECT count(*) FROM attempts"), 12);  // one attempt each: none run twice
  EXPECT_EQ(count(db, "SELECT count(*) FROM (SELECT case_id FROM attempts GROUP BY case_id HAVING count(*) > 1)"), 0);
  EXPECT_EQ(count(db, "SELECT count(*) FROM canary_requests"), 12 * 40);
  {  // Diagnostics: what the resumed runner did with the in-flight case.
    std::ifstream log(d / "run.log");
    for (std::string l; std::getline(log, l);)
      if (l.find("adopting") != std::string::npos || l.find("run:") == 0) std::printf("run.log: %s\n", l.c_str());
  }
  const auto subs = a0.submissions();
  EXPECT_EQ(subs.size(), 12u);
  for (const auto& [id, n] : subs) EXPECT_EQ(n, 1) << id << " submitted " << n << " times";
  // The case in flight at the kill was taken over: its row keeps its real start (before the
  // takeover) and records the interruption and the takeover.
  EXPECT_EQ(count(db, "SELECT count(*) FROM attempts WHERE status = 'running'"), 0);
  ASSERT_EQ(count(db, "SELECT count(*) FROM attempts WHERE kind = 'adopted'"), 1);
  EXPECT_EQ(text(db, "SELECT status FROM attempts WHERE kind = 'adopted'"), "completed");
  EXPECT_EQ(count(db, "SELECT json_extract(detail_json, '$.runner_interrupted') FROM attempts WHERE kind = 'adopted'"), 1);
  EXPECT_EQ(count(db, "SELECT json_array_length(detail_json, '$.takeovers') FROM attempts WHERE kind = 'adopted'"), 1);
  EXPECT_EQ(count(db, "SELECT json_extract(detail_json, '$.takeovers[0].interrupted_runner_pid') FROM attempts "
                      "WHERE kind = 'adopted'"),
            first);
  EXPECT_EQ(count(db, "SELECT started_unix_ns < json_extract(detail_json, '$.takeovers[0].took_over_unix_ns') AND "
                      "json_extract(detail_json, '$.takeovers[0].took_over_unix_ns') < ended_unix_ns FROM attempts "
                      "WHERE kind = 'adopted'"),
            1);
}

TEST(RunnerLock, ASecondRunnerOnTheSameDbIsRefused) {
  const std::string harness = test_support::harness_binary();
  OneVm v;
  v.a0.hold_submission = 1;  // the first runner follows its first case until released
  const pid_t first = fork();
  if (first == 0) {
    std::freopen("/dev/null", "w", stderr);
    std::freopen("/dev/null", "w", stdout);
    execl(harness.c_str(), harness.c_str(), "run", (v.d / "t.yaml").c_str(), "--db", v.o.db_path.c_str(), "--hosts",
          v.o.hosts_file.c_str(), "--plain", static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_TRUE(v.a0.wait_until_held(std::chrono::seconds(60))) << "the first runner never followed its first case";
  try {
    hc::run_campaign(v.c, v.o);
    ADD_FAILURE() << "a second runner ran the same DB";
  } catch (const hc::CampaignError& e) {
    EXPECT_THAT(e.what(), HasSubstr("another `harness run` (pid " + std::to_string(first) + ") is running"));
  }
  kill(first, SIGKILL);
  int st = 0;
  waitpid(first, &st, 0);
  v.a0.release_hold();
  // The kernel released the lock with the killed runner: the same command now takes over.
  const auto s = hc::run_campaign(v.c, v.o);
  EXPECT_EQ(s.completed, 3);
  EXPECT_EQ(s.taken_over, 1);
  EXPECT_EQ(s.attempts_this_run, 2);
}

TEST(RunnerLost, GuestLostAfterPressureStartIsLostNotRerunAndCounted) {
  OneVm v;
  const std::string x = "t-vm0-fast-structured-r1-delayed-activation";
  bool met = false;
  const auto s = run_with_guest_death(v, x, "pressure", met);
  ASSERT_TRUE(met) << "the runner never met the silence";
  EXPECT_EQ(s.planned, 3);
  EXPECT_EQ(s.completed, 2);
  EXPECT_EQ(s.lost, 1);
  EXPECT_EQ(s.infra_failed, 0);
  EXPECT_EQ(s.pending, 0);
  EXPECT_EQ(s.attempts_this_run, 3);
  EXPECT_EQ(v.a0.submissions()[x], 1);
  {
    results::Db db(v.o.db_path, results::Db::Mode::ReadOnly);
    EXPECT_EQ(text(db, "SELECT status FROM cases WHERE case_id = '" + x + "'"), "lost");
    EXPECT_EQ(text(db, "SELECT state FROM schedule WHERE case_id = '" + x + "'"), "lost");
    EXPECT_EQ(text(db, "SELECT json_extract(spec_json, '$.case_id') FROM cases WHERE case_id = '" + x + "'"), x);
    EXPECT_EQ(text(db, "SELECT json_extract(spec_json, '$.configuration') FROM cases WHERE case_id = '" + x + "'"),
              "delayed-activation");
    EXPECT_EQ(text(db, "SELECT json_extract(outcome_json, '$.lost.phase') FROM cases WHERE case_id = '" + x + "'"),
              "pressure");
    EXPECT_THAT(text(db, "SELECT json_extract(outcome_json, '$.lost.reason') FROM cases WHERE case_id = '" + x + "'"),
                HasSubstr("agent no longer knows the case"));
    EXPECT_GT(count(db, "SELECT json_extract(outcome_json, '$.lost.last_seen_unix_ns') FROM cases WHERE case_id = '" +
                            x + "'"),
              1'000'000'000'000'000'000LL);  // wall clock ns (after 2001)
    EXPECT_EQ(count(db, "SELECT count(*) FROM attempts WHERE case_id = '" + x + "'"), 1);
    EXPECT_EQ(text(db, "SELECT status || '/' || kind FROM attempts WHERE case_id = '" + x + "'"), "lost/run");
    EXPECT_EQ(text(db, "SELECT json_extract(detail_json, '$.phase') FROM attempts WHERE case_id = '" + x + "'"),
              "pressure");
    EXPECT_EQ(count(db, "SELECT count(*) FROM canary_requests WHERE case_id = '" + x + "'"), 0);
    // No bundle: the build that ran it is the agent's, as qualified before scheduling.
    EXPECT_EQ(text(db, "SELECT source_commit || '/' || source_dirty FROM cases WHERE case_id = '" + x + "'"),
              "0123456789abcdef0123456789abcdef01234567/0");
    const auto st = hc::status_report(db);
    EXPECT_THAT(st, HasSubstr("cases: 3 planned, 2 completed, 1 lost, 0 infra_failed, 0 pending; 3 attempts"));
    EXPECT_THAT(st, HasSubstr("  " + x + " (phase pressure): agent no longer knows the case"));
  }
  // A second run leaves the lost case alone: an outcome, never rerun automatically.
  const auto s2 = hc::run_campaign(v.c, v.o);
  EXPECT_EQ(s2.attempts_this_run, 0);
  EXPECT_EQ(s2.lost, 1);
  EXPECT_EQ(v.a0.submissions()[x], 1);
}

TEST(RunnerLost, GuestLostInWarmupIsInfraFailedAndRerun) {
  OneVm v;
  const std::string y = "t-vm0-fast-structured-r1-static-zram";
  bool met = false;
  const auto s = run_with_guest_death(v, y, "warmup", met);
  ASSERT_TRUE(met) << "the runner never met the silence";
  EXPECT_EQ(s.completed, 3);
  EXPECT_EQ(s.lost, 0);
  EXPECT_EQ(s.attempts_this_run, 4);
  EXPECT_EQ(v.a0.submissions()[y], 2);
  results::Db db(v.o.db_path, results::Db::Mode::ReadOnly);
  results::Stmt q(db,
                  "SELECT attempt, status, json_extract(detail_json, '$.phase'), error FROM attempts "
                  "WHERE case_id = ?1 ORDER BY attempt");
  q.bind(1, y);
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(0), 1);
  EXPECT_EQ(q.text(1), "infra_failed");
  EXPECT_EQ(q.text(2), "warmup");
  EXPECT_THAT(q.text(3), HasSubstr("agent no longer knows the case"));
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(0), 2);
  EXPECT_EQ(q.text(1), "completed");
  EXPECT_EQ(q.text(2), "restoration");
  EXPECT_FALSE(q.step());
  EXPECT_EQ(text(db, "SELECT status FROM cases WHERE case_id = '" + y + "'"), "completed");
}

// The executor's own failure after the pressure phase started comes as a bundle with status
// lost (harness/case/run/executor.hpp classify): imported as that outcome, with its rows, and
// never rerun, in this run or the next.
TEST(RunnerLost, ALostBundleIsImportedAsTheOutcomeAndNeverRerun) {
  OneVm v;
  const std::string y = "t-vm0-fast-structured-r1-bounded-reclaim";
  v.a0.outcome = [&](const std::string& id, int) {
    return id == y ? fake::Outcome::LostBundle : fake::Outcome::Completed;
  };
  const auto s = hc::run_campaign(v.c, v.o);
  EXPECT_EQ(s.lost, 1);
  EXPECT_EQ(s.completed, 2);
  EXPECT_EQ(s.infra_failed, 0);
  EXPECT_EQ(s.attempts_this_run, 3);
  EXPECT_EQ(v.a0.submissions()[y], 1);
  {
    results::Db db(v.o.db_path, results::Db::Mode::ReadOnly);
    EXPECT_EQ(text(db, "SELECT status FROM cases WHERE case_id = '" + y + "'"), "lost");
    EXPECT_EQ(text(db, "SELECT state FROM schedule WHERE case_id = '" + y + "'"), "lost");
    EXPECT_EQ(text(db, "SELECT group_concat(status || '/' || kind) FROM attempts WHERE case_id = '" + y + "'"),
              "lost/run");
    EXPECT_THAT(text(db, "SELECT error FROM cases WHERE case_id = '" + y + "'"), HasSubstr("left no readable trace"));
    // The bundle's rows came in (kept for inspection; the analysis imputes a lost case's p99).
    EXPECT_GT(count(db, "SELECT count(*) FROM telemetry WHERE case_id = '" + y + "'"), 0);
  }
  const auto s2 = hc::run_campaign(v.c, v.o);
  EXPECT_EQ(s2.attempts_this_run, 0);
  EXPECT_EQ(s2.lost, 1);
  EXPECT_EQ(v.a0.submissions()[y], 1);
}

TEST(RunnerLost, MarkInfraIsAuditedAndMakesTheCaseRunnableAgain) {
  OneVm v(0);  // no automatic retries at all: only the operator's reclassification reruns
  const std::string x = "t-vm0-fast-structured-r1-bounded-reclaim";
  bool met = false;
  EXPECT_EQ(run_with_guest_death(v, x, "pressure", met).lost, 1);
  ASSERT_TRUE(met) << "the runner never met the silence";
  {
    results::Db db(v.o.db_path, results::Db::Mode::ReadWrite);
    EXPECT_THROW(hc::mark_infra(db, "t-no-such-case", "host died", "alice"), std::invalid_argument);
    EXPECT_THROW(hc::mark_infra(db, x, "  ", "alice"), std::invalid_argument);
    EXPECT_EQ(count(db, "SELECT count(*) FROM attempts WHERE kind = 'mark-infra'"), 0);
    // A lost or completed case is an outcome: refused unless the override is explicit.
    try {
      hc::mark_infra(db, x, "host kernel panic, not the treatment", "alice");
      ADD_FAILURE() << "a lost case was reclassified without --override-outcome";
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr("is lost: that is its outcome, and it stands"));
      EXPECT_THAT(e.what(), HasSubstr("give --override-outcome"));
    }
    const std::string done = "t-vm0-fast-structured-r1-static-zram";
    EXPECT_THROW(hc::mark_infra(db, done, "looked slow", "alice"), std::invalid_argument);
    EXPECT_EQ(count(db, "SELECT count(*) FROM attempts WHERE kind = 'mark-infra'"), 0);
    EXPECT_EQ(text(db, "SELECT state FROM schedule WHERE case_id = '" + done + "'"), "completed");
    EXPECT_EQ(hc::mark_infra(db, x, "host kernel panic, not the treatment", "alice", /*override_outcome=*/true), "lost");
    results::Stmt q(db,
                    "SELECT attempt, status, kind, json_extract(detail_json, '$.reason'), "
                    "json_extract(detail_json, '$.previous_status'), json_extract(detail_json, '$.operator'), "
                    "json_extract(detail_json, '$.previous_case.outcome_json.lost.phase') "
                    "FROM attempts WHERE case_id = ?1 AND kind = 'mark-infra'");
    q.bind(1, x);
    ASSERT_TRUE(q.step());
    EXPECT_EQ(q.int64(0), 2);
    EXPECT_EQ(q.text(1), "marked_infra");
    EXPECT_EQ(q.text(2), "mark-infra");
    EXPECT_EQ(q.text(3), "host kernel panic, not the treatment");
    EXPECT_EQ(q.text(4), "lost");
    EXPECT_EQ(q.text(5), "alice");
    EXPECT_EQ(q.text(6), "pressure");  // the old row's data stays visible in the audit trail
    EXPECT_EQ(text(db, "SELECT json_extract(detail_json, '$.override_outcome') || ':' || "
                       "json_extract(detail_json, '$.original_outcome.status') FROM attempts WHERE case_id = '" + x +
                           "' AND kind = 'mark-infra'"),
              "1:lost");
    EXPECT_EQ(text(db, "SELECT state FROM schedule WHERE case_id = '" + x + "'"), "infra_failed");
    EXPECT_EQ(text(db, "SELECT status FROM cases WHERE case_id = '" + x + "'"), "infra_failed");
    EXPECT_THAT(hc::status_report(db),
                HasSubstr("  " + x + " (attempt 2): was lost (outcome overridden), by alice: host kernel panic"));
    // status counts attempts as the report does: 3 runs, the operator action apart.
    EXPECT_THAT(hc::status_report(db), HasSubstr("; 3 attempts (0 reruns), 0 in flight, 0 interrupted before reaching "
                                                 "an agent, 1 operator actions\n"));
    // Overriding a completed case keeps the p99s the analysis used.
    EXPECT_EQ(hc::mark_infra(db, done, "the host's disk failed during the case", "alice", true), "completed");
    EXPECT_GT(std::stod(text(db, "SELECT json_extract(detail_json, '$.original_outcome.canaries.compute.p99_us') FROM "
                                 "attempts WHERE case_id = '" + done + "' AND kind = 'mark-infra'")),
              0.0);
  }
  const auto s2 = hc::run_campaign(v.c, v.o);
  EXPECT_EQ(s2.attempts_this_run, 2);
  EXPECT_EQ(s2.completed, 3);
  EXPECT_EQ(s2.lost, 0);
  EXPECT_EQ(v.a0.submissions()[x], 2);
  EXPECT_EQ(v.a0.submissions()["t-vm0-fast-structured-r1-static-zram"], 2);
  results::Db db(v.o.db_path, results::Db::Mode::ReadOnly);
  EXPECT_EQ(text(db, "SELECT group_concat(attempt || ':' || status || ':' || kind, ' ') FROM "
                     "(SELECT * FROM attempts WHERE case_id = '" + x + "' ORDER BY attempt)"),
            "1:lost:run 2:marked_infra:mark-infra 3:completed:run");
  EXPECT_EQ(count(db, "SELECT attempt FROM cases WHERE case_id = '" + x + "'"), 3);
  EXPECT_EQ(count(db, "SELECT count(*) FROM canary_requests WHERE case_id = '" + x + "'"), 40);
}

TEST(RunnerSource, CaseRecordsTheCommitOfItsBinariesFromOutcomeJson) {
  OneVm v;
  const std::string commit = "89abcdef0123456789abcdef0123456789abcdef";
  v.a0.bundle_source_commit = commit;  // v2 executor: only outcome_json.source {commit, dirty}
  EXPECT_EQ(hc::run_campaign(v.c, v.o).completed, 3);
  results::Db db(v.o.db_path, results::Db::Mode::ReadOnly);
  EXPECT_EQ(count(db, "SELECT count(*) FROM cases WHERE source_commit = '" + commit + "' AND source_dirty = 0"), 3);
}

TEST(RunnerSource, HostsFileAcceleratorIsRecordedPerCaseAndTheGuestsOwnViewKept) {
  OneVm v;  // hosts file: accelerator: real; the fake bundles say what the guest detected: tcg
  bool met = false;
  const auto s = run_with_guest_death(v, "t-vm0-fast-structured-r1-static-zram", "pressure", met);
  ASSERT_TRUE(met) << "the runner never met the silence";
  EXPECT_EQ(s.completed, 2);
  EXPECT_EQ(s.lost, 1);
  results::Db db(v.o.db_path, results::Db::Mode::ReadOnly);
  EXPECT_EQ(count(db, "SELECT count(*) FROM cases WHERE accelerator = 'real'"), 3);  // the lost case too
  EXPECT_EQ(count(db, "SELECT count(*) FROM attempts WHERE json_extract(detail_json, '$.accelerator_detected') = "
                      "'tcg'"),
            2);
}

namespace {
/// Two VMs; returns the error of a refused run (empty when it ran).
std::string refused_run(fake::FakeAgent& a0, fake::FakeAgent& a1, const TempDir& d, int* attempts_in_db) {
  write_token(d / "token", "tok");
  const auto c = fleet_campaign(d, {&a0, &a1}, campaign_yaml(2, 1, 2));
  const auto o = run_options(d);
  std::string err;
  try {
    hc::run_campaign(c, o);
  } catch (const hc::PreflightRefused& e) {
    err = e.what();
  }
  results::Db db(o.db_path, results::Db::Mode::ReadOnly);
  *attempts_in_db = static_cast<int>(count(db, "SELECT count(*) FROM attempts"));
  return err;
}
}  // namespace

TEST(RunnerPreflight, ATokenFileOthersMayReadIsRefusedBeforeAnyWait) {
  OneVm f;
  std::filesystem::permissions(f.d / "token", std::filesystem::perms::group_read | std::filesystem::perms::others_read,
                               std::filesystem::perm_options::add);
  // The agent answers: before this check the run went on and each worker stopped at its token,
  // leaving the cases pending without a word at the start.
  std::string err;
  try {
    hc::run_campaign(f.c, f.o);
  } catch (const hc::PreflightRefused& e) {
    err = e.what();
  }
  EXPECT_THAT(err, HasSubstr("token file(s) unusable, no case submitted and no attempt spent"));
  EXPECT_THAT(err, HasSubstr("vm0: token file " + (f.d / "token") + ": mode 0644"));
  EXPECT_THAT(err, HasSubstr("must be 0600"));
  EXPECT_EQ(f.a0.posts(), 0);
}

TEST(RunnerPreflight, VmsWithDifferentMglruAreRefusedWithTheTable) {
  TempDir d;
  fake::FakeAgent a0(d / "agent0", "tok"), a1(d / "agent1", "tok");
  a1.qualification["recorded"]["mglru_enabled"] = "0x0000";
  int attempts = -1;
  const auto err = refused_run(a0, a1, d, &attempts);
  EXPECT_THAT(err, HasSubstr("refused the run (no case submitted)"));
  EXPECT_THAT(err, HasSubstr("VMs differ in mglru_enabled: vm0 0x0007, vm1 0x0000"));
  // The per-VM table: header, then one row per VM with its values.
  EXPECT_THAT(err, HasSubstr("vm   qualified  kernel_release        swappiness  mglru_enabled  thp_enabled  "
                             "clocksource  source_commit"));
  EXPECT_THAT(err, HasSubstr("vm0  yes        6.1.0-57-cloud-amd64  60          0x0007         madvise      "
                             "kvm-clock    0123456789abcdef0123456789abcdef01234567"));
  EXPECT_THAT(err, HasSubstr("vm1  yes        6.1.0-57-cloud-amd64  60          0x0000         madvise"));
  EXPECT_EQ(a0.posts() + a1.posts(), 0);
  EXPECT_EQ(a0.qualification_gets.load(), 1);
  EXPECT_EQ(a1.qualification_gets.load(), 1);
  EXPECT_EQ(attempts, 0);
}

TEST(RunnerPreflight, AFailingVmRefusesTheRunWithZeroAttempts) {
  TempDir d;
  fake::FakeAgent a0(d / "agent0", "tok"), a1(d / "agent1", "tok");
  a0.qualification["passed"] = false;
  a0.qualification["reasons"] = {"zram: /sys/class/zram-control absent -> fix: modprobe zram"};
  int attempts = -1;
  const auto err = refused_run(a0, a1, d, &attempts);
  EXPECT_THAT(err, HasSubstr("vm0 not qualified: zram: /sys/class/zram-control absent -> fix: modprobe zram"));
  EXPECT_THAT(err, HasSubstr("vm0  NO "));
  EXPECT_THAT(err, HasSubstr("vm1  yes"));
  EXPECT_EQ(a0.posts() + a1.posts(), 0);
  EXPECT_EQ(attempts, 0);
}

TEST(RunnerPreflight, PinnedCommitMustMatchACleanBuild) {
  TempDir d;
  const std::string pin = "0123456789abcdef0123456789abcdef01234567";
  write(d / "t.yaml", campaign_yaml(2, 1, 2));
  auto c = hc::load_campaign(d / "t.yaml");
  c.kind = "confirmatory";
  c.pinned_commit = pin;
  const auto ok = fake::passing_qualification(pin);
  const auto other = fake::passing_qualification("fedcba9876543210fedcba9876543210fedcba98");
  const auto dirty = fake::passing_qualification(pin, true);
  EXPECT_TRUE(hc::judge_fleet(c, {{"vm0", ok}, {"vm1", ok}}).ok);
  const auto p1 = hc::judge_fleet(c, {{"vm0", ok}, {"vm1", other}});
  EXPECT_FALSE(p1.ok);
  ASSERT_EQ(p1.problems.size(), 1u);
  EXPECT_EQ(p1.problems[0], "vm1 not qualified: source_commit: the agent's harness is built from "
                            "'fedcba9876543210fedcba9876543210fedcba98', the campaign pins " + pin +
                                " (rebuild the guest image from the pinned commit)");
  const auto p2 = hc::judge_fleet(c, {{"vm0", dirty}, {"vm1", ok}});
  ASSERT_EQ(p2.problems.size(), 1u);
  EXPECT_THAT(p2.problems[0], HasSubstr("vm0 not qualified: source_commit: the agent's harness build of " + pin +
                                        " has uncommitted changes"));
  // `any` (smoke, ci): the commit is shown, not judged.
  c.pinned_commit = "any";
  EXPECT_TRUE(hc::judge_fleet(c, {{"vm0", ok}, {"vm1", other}}).ok);
}

TEST(RunnerPreflight, KernelConfigAndTheCompressorAreComparedAcrossTheFleet) {
  TempDir d;
  write(d / "t.yaml", campaign_yaml(2, 1, 2));
  const auto c = hc::load_campaign(d / "t.yaml");  // backend zram algorithm lzo-rle
  const auto ok = fake::passing_qualification();
  EXPECT_TRUE(hc::judge_fleet(c, {{"vm0", ok}, {"vm1", ok}}).ok);
  auto no_lru = ok;
  no_lru["recorded"]["kernel_config"]["CONFIG_LRU_GEN"] = "n";
  const auto p1 = hc::judge_fleet(c, {{"vm0", ok}, {"vm1", no_lru}});
  EXPECT_FALSE(p1.ok);
  ASSERT_EQ(p1.problems.size(), 1u);
  EXPECT_EQ(p1.problems[0], "VMs differ in kernel_config.CONFIG_LRU_GEN: vm0 y, vm1 n");
  EXPECT_THAT(p1.table, HasSubstr("CONFIG_PSI  CONFIG_ZRAM  CONFIG_MEMCG  CONFIG_LRU_GEN  CONFIG_CRYPTO_LZO  lzo-rle available"));
  // The campaign's compressor: its config item compared, and available on every VM.
  auto no_lzo = ok;
  no_lzo["recorded"]["kernel_config"]["CONFIG_CRYPTO_LZO"] = "n";
  no_lzo["recorded"]["compressors"]["lzo-rle"] = nullptr;
  const auto p2 = hc::judge_fleet(c, {{"vm0", no_lzo}, {"vm1", ok}});
  EXPECT_FALSE(p2.ok);
  EXPECT_THAT(p2.problems, ::testing::Contains("vm0 not qualified: compressor: the campaign's zram compressor lzo-rle is "
                                               "not available on this VM (load its module, or use a kernel with "
                                               "CONFIG_CRYPTO_LZO=y or m)"));
  EXPECT_THAT(p2.problems, ::testing::Contains("VMs differ in kernel_config.CONFIG_CRYPTO_LZO: vm0 n, vm1 y"));
  EXPECT_THAT(p2.problems, ::testing::Contains("VMs differ in lzo-rle available: vm0 no, vm1 yes"));
  // An agent that records no compressors: its zram devices' list decides, else "not reported".
  auto old_agent = ok;
  old_agent["recorded"].erase("compressors");
  old_agent["recorded"]["zram_algorithms"] = {"lzo", "lzo-rle", "lz4"};
  EXPECT_TRUE(hc::judge_fleet(c, {{"vm0", old_agent}, {"vm1", ok}}).ok);
  old_agent["recorded"].erase("zram_algorithms");
  const auto p3 = hc::judge_fleet(c, {{"vm0", old_agent}, {"vm1", ok}});
  EXPECT_THAT(p3.problems, ::testing::Contains(::testing::HasSubstr("lzo-rle availability is not reported by the agent")));
}

TEST(RunnerPreflight, HarnessRunExits2AndPrintsWhy) {
  TempDir d;
  fake::FakeAgent a0(d / "agent0", "tok"), a1(d / "agent1", "tok");
  a1.qualification["recorded"]["thp_enabled"] = "always";
  write_token(d / "token", "tok");
  write(d / "hosts.yaml", hosts_yaml({&a0, &a1}, d / "token"));
  write(d / "t.yaml", campaign_yaml(2, 1, 2));
  const auto [rc, out] = run_harness(
      "run " + (d / "t.yaml") + " --db " + (d / "c.db") + " --hosts " + (d / "hosts.yaml") + " --plain", d / "out.txt");
  EXPECT_EQ(rc, 2);
  EXPECT_THAT(out, HasSubstr("harness: qualification before scheduling refused the run (no case submitted):"));
  EXPECT_THAT(out, HasSubstr("VMs differ in thp_enabled: vm0 madvise, vm1 always"));
  EXPECT_EQ(a0.posts() + a1.posts(), 0);
  results::Db db(d / "c.db", results::Db::Mode::ReadOnly);
  EXPECT_EQ(count(db, "SELECT count(*) FROM attempts"), 0);
}

TEST(RunnerPreflight, AKernelRefusalRemovesTheDbThisRunCreatedAndKeepsAnEarlierOne) {
  // ci-regression with a cmdline candidate, run on a hosts entry that is not `local: true`:
  // the candidate would never boot its kernel parameters, refused after acquire.
  TempDir d;
  fake::FakeAgent a0(d / "agent0", "tok");
  write_token(d / "token", "tok");
  std::string text = testfiles::read(std::string(HARNESS_SOURCE_DIR) + "/campaigns/ci-regression.yaml");
  const std::string from = "  candidate: {}";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "  candidate: {cmdline: [transparent_hugepage=never]}");
  const auto c = fleet_campaign(d, {&a0}, text);
  const auto o = run_options(d);
  auto refusal = [&] {
    try {
      hc::run_campaign(c, o);
    } catch (const hc::PreflightRefused& e) {
      return std::string(e.what());
    }
    return std::string("(ran)");
  };
  const std::string err = refusal();
  EXPECT_THAT(err, HasSubstr("variants.candidate boots a kernel image or cmdline, but the engine does not boot vm0"));
  EXPECT_THAT(err, HasSubstr("(" + o.db_path + " removed: this run created it and ran no case)"));
  for (const char* suffix : {"", "-wal", "-shm", ".runner.lock"})
    EXPECT_FALSE(std::filesystem::exists(o.db_path + suffix)) << suffix;
  EXPECT_EQ(a0.posts(), 0);
  // A DB planned before (`harness plan FILE DB`) is the user's: kept, plan and all.
  {
    results::Db db(o.db_path, results::Db::Mode::Create);
    hc::store_plan(db, c, hc::plan(c));
  }
  const std::string again = refusal();
  EXPECT_THAT(again, HasSubstr("does not boot vm0"));
  EXPECT_THAT(again, Not(HasSubstr("removed")));
  ASSERT_TRUE(std::filesystem::exists(o.db_path));
  results::Db db(o.db_path, results::Db::Mode::ReadOnly);
  EXPECT_TRUE(hc::has_plan(db));
  EXPECT_EQ(a0.posts(), 0);
}

TEST(RunnerLost, HarnessMarkInfraRefusesUnknownPendingAndReasonless) {
  TempDir d;
  write(d / "t.yaml", campaign_yaml(1, 1, 2));
  ASSERT_EQ(run_harness("plan " + (d / "t.yaml") + " --db " + (d / "c.db"), d / "out.txt").code, 0);
  auto run = [&](const std::string& args) {
    return run_harness("mark-infra " + (d / "c.db") + " " + args, d / "out.txt");
  };
  const auto unknown = run("t-nope --reason 'host died'");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_THAT(unknown.out, HasSubstr("mark-infra: no case 't-nope' in the schedule of"));
  const auto pending = run("t-vm0-fast-structured-r1-static-zram --reason 'host died'");
  EXPECT_EQ(pending.code, 2);
  EXPECT_THAT(pending.out, HasSubstr("is pending (never run): nothing to reclassify"));
  const auto blank = run("t-vm0-fast-structured-r1-static-zram --reason ' '");
  EXPECT_EQ(blank.code, 2);
  EXPECT_THAT(blank.out, HasSubstr("--reason must say why"));
  EXPECT_NE(run("t-vm0-fast-structured-r1-static-zram").code, 0);  // --reason is required
  results::Db db(d / "c.db", results::Db::Mode::ReadOnly);
  EXPECT_EQ(count(db, "SELECT count(*) FROM attempts"), 0);
}

TEST(RunnerLost, PhaseNeverSeenIsDecidedByTimeSinceSubmission) {
  // PROTOCOL.md assumption: lost only when more than warmup + start lead (1 s + 3 s here)
  // passed since submission.
  const std::string x = "t-vm0-fast-structured-r1-static-zram";
  {
    OneVm v;
    v.a0.outcome = [&](const std::string& id, int n) {
      return id == x && n == 1 ? fake::Outcome::LostUnseen : fake::Outcome::Completed;
    };
    const auto s = hc::run_campaign(v.c, v.o);
    EXPECT_EQ(s.completed, 3);
    EXPECT_EQ(s.lost, 0);
    results::Db db(v.o.db_path, results::Db::Mode::ReadOnly);
    EXPECT_EQ(text(db, "SELECT status FROM attempts WHERE case_id = '" + x + "' AND attempt = 1"), "infra_failed");
    EXPECT_THAT(text(db, "SELECT error FROM attempts WHERE case_id = '" + x + "' AND attempt = 1"),
                HasSubstr("(phase never seen; only 0 s since submission, warmup + start lead = 4 s)"));
    EXPECT_EQ(text(db, "SELECT coalesce(json_extract(detail_json, '$.phase'), 'null') FROM attempts WHERE case_id = '" +
                           x + "' AND attempt = 1"),
              "null");
  }
  {
    OneVm v;
    v.a0.unseen_lost_after_ms = 4500;
    v.a0.outcome = [&](const std::string& id, int n) {
      return id == x && n == 1 ? fake::Outcome::LostUnseen : fake::Outcome::Completed;
    };
    const auto s = hc::run_campaign(v.c, v.o);
    EXPECT_EQ(s.completed, 2);
    EXPECT_EQ(s.lost, 1);
    EXPECT_EQ(v.a0.submissions()[x], 1);
    results::Db db(v.o.db_path, results::Db::Mode::ReadOnly);
    EXPECT_EQ(text(db, "SELECT status FROM cases WHERE case_id = '" + x + "'"), "lost");
    EXPECT_EQ(text(db, "SELECT coalesce(json_extract(outcome_json, '$.lost.phase'), 'null') FROM cases WHERE case_id = '" +
                           x + "'"),
              "null");
    EXPECT_THAT(text(db, "SELECT json_extract(outcome_json, '$.lost.reason') FROM cases WHERE case_id = '" + x + "'"),
                HasSubstr(" s since submission, warmup + start lead = 4 s)"));
    EXPECT_THAT(text(db, "SELECT json_extract(outcome_json, '$.lost.reason') FROM cases WHERE case_id = '" + x + "'"),
                HasSubstr("agent no longer knows the case"));
  }
}

// A POST whose reply arrives after the client timeout must not lose the accepted
// case, and 409 busy is a wait, not a spent attempt.
TEST(RunnerSubmit, PostReplyLostAfterTheTimeoutIsAdoptedAndImportedOnce) {
  OneVm v;
  v.a0.post_reply_delay_ms = 1500;  // the agent accepts, then answers after the client gave up
  v.o.request_timeout_ms = 400;
  const auto s = hc::run_campaign(v.c, v.o);
  EXPECT_EQ(s.completed, 3);
  EXPECT_EQ(s.infra_failed, 0);
  EXPECT_EQ(s.attempts_this_run, 3);
  for (const auto& [id, n] : v.a0.submissions()) EXPECT_EQ(n, 1) << id;  // never submitted twice
  EXPECT_EQ(v.a0.posts(), 3);
  results::Db db(v.o.db_path, results::Db::Mode::ReadOnly);
  EXPECT_EQ(count(db, "SELECT count(*) FROM cases WHERE status = 'completed'"), 3);
  EXPECT_EQ(count(db, "SELECT count(*) FROM attempts"), 3);
  EXPECT_EQ(count(db, "SELECT count(*) FROM attempts WHERE status <> 'completed'"), 0);
  EXPECT_EQ(count(db, "SELECT count(*) FROM canary_requests"), 3 * 40);  // each bundle imported once
}

// Busy as the runner contract has it (tests/common/runner_contract.hpp): the agent runs a case
// of someone else's; the runner waits, and its case runs once that case has ended.
TEST(RunnerSubmit, AgentBusyWithAnotherCaseMeansWaitNotASpentAttempt) {
  OneVm v(/*retries=*/0);  // a spent attempt would leave the case infra_failed
  harness::agent::AgentClient agent(v.a0.url(), "tok");
  ASSERT_EQ(agent.submit(foreign_spec(v.c)).value(), "foreign");
  hc::RunSummary s;
  std::thread run([&] { s = hc::run_campaign(v.c, v.o); });
  const bool waited = test_support::wait_until([&] { return v.a0.posts() >= 1 + 4; }, std::chrono::seconds(60));
  EXPECT_TRUE(agent.cancel("foreign").ok());  // the other case ends: the agent is free
  run.join();
  ASSERT_TRUE(waited) << "the runner never asked four times";
  EXPECT_EQ(s.completed, 3);
  EXPECT_EQ(s.infra_failed, 0);
  for (const auto& [id, n] : v.a0.submissions()) EXPECT_EQ(n, 1) << id;  // 409s are not submissions
  results::Db db(v.o.db_path, results::Db::Mode::ReadOnly);
  EXPECT_EQ(count(db, "SELECT count(*) FROM attempts"), 3);
  EXPECT_EQ(count(db, "SELECT count(*) FROM attempts WHERE status = 'infra_failed'"), 0);
}

TEST(RunnerSubmit, PostThatTheAgentNeverAcceptedIsAnInfraFailure) {
  OneVm v(/*retries=*/0);
  harness::agent::AgentClient agent(v.a0.url(), "tok");
  ASSERT_EQ(agent.submit(foreign_spec(v.c)).value(), "foreign");  // never ends: never free
  v.c.case_timeout_s = 1;
  const auto s = hc::run_campaign(v.c, v.o);
  EXPECT_EQ(s.completed, 0);
  EXPECT_EQ(s.infra_failed, 3);
  results::Db db(v.o.db_path, results::Db::Mode::ReadOnly);
  EXPECT_THAT(text(db, "SELECT error FROM attempts LIMIT 1"), HasSubstr("agent stayed busy with another case for 1 s"));
}

// The runner waits for agents that do not answer instead of burning retries.
TEST(RunnerWait, UnreachableHostIsWaitedForWithBackoffAndRefusedWithoutAnAttempt) {
  TempDir d;
  write_token(d / "token", "tok");
  write(d / "hosts.yaml", "hosts:\n  - name: vm0\n    url: http://127.0.0.1:1\n    token_file: " + (d / "token") +
                              "\n    accelerator: real\n");
  write(d / "t.yaml", campaign_yaml(1, 1, 2));
  const auto c = hc::load_campaign(d / "t.yaml");
  auto o = run_options(d);
  o.host_wait.total_s = 2;
  o.host_wait.first_backoff_ms = 200;
  std::FILE* log = std::tmpfile();
  o.out = log;
  std::string err;
  try {
    hc::run_campaign(c, o);
  } catch (const hc::PreflightRefused& e) {
    err = e.what();
  }
  EXPECT_THAT(err, HasSubstr("host(s) not answering, no case submitted and no attempt spent"));
  EXPECT_THAT(err, HasSubstr("vm0 (http://127.0.0.1:1): agent not answering GET /v1/health after waiting"));
  EXPECT_THAT(err, HasSubstr("(at most 2 s, exponential backoff)"));
  std::rewind(log);
  std::string out;
  for (int ch; (ch = std::fgetc(log)) != EOF;) out += static_cast<char>(ch);
  std::fclose(log);
  // Backoff: 0.2 s, 0.4 s, 0.8 s (the next, 1.6 s, would pass the 2 s bound).
  EXPECT_THAT(out, HasSubstr("vm0: agent at http://127.0.0.1:1 not answering"));
  EXPECT_THAT(out, HasSubstr("asking again in 0.2 s"));
  EXPECT_THAT(out, HasSubstr("asking again in 0.4 s"));
  EXPECT_THAT(out, HasSubstr("asking again in 0.8 s"));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("asking again in 1.6 s")));
  results::Db db(o.db_path, results::Db::Mode::ReadOnly);
  EXPECT_EQ(count(db, "SELECT count(*) FROM attempts"), 0);
  EXPECT_EQ(count(db, "SELECT count(*) FROM schedule WHERE state = 'pending'"), 3);
}

TEST(RunnerWait, HostThatAnswersAfterAWhileIsWaitedForNotCharged) {
  OneVm v(/*retries=*/0);  // any spent attempt would leave a case infra_failed
  v.a0.health_503_left = 3;
  v.o.host_wait.first_backoff_ms = 50;
  std::FILE* log = std::tmpfile();
  v.o.out = log;
  const auto s = hc::run_campaign(v.c, v.o);
  std::rewind(log);
  std::string out;
  for (int ch; (ch = std::fgetc(log)) != EOF;) out += static_cast<char>(ch);
  std::fclose(log);
  EXPECT_EQ(s.completed, 3);
  EXPECT_EQ(s.infra_failed, 0);
  EXPECT_EQ(s.attempts_this_run, 3);
  EXPECT_THAT(out, HasSubstr("asking again in 0.1 s"));  // 0.05, 0.1, 0.2: doubled each time
  EXPECT_THAT(out, HasSubstr("asking again in 0.2 s"));
  EXPECT_THAT(out, HasSubstr("vm0: agent at " + v.a0.url() + " answers after"));
  results::Db db(v.o.db_path, results::Db::Mode::ReadOnly);
  EXPECT_EQ(count(db, "SELECT count(*) FROM attempts"), 3);
}

TEST(RunnerWait, HostLostBetweenCasesLeavesItsCasesPendingWithoutAttempts) {
  OneVm v(/*retries=*/0);
  v.o.host_wait.total_s = 1;
  v.o.host_wait.first_backoff_ms = 100;
  v.o.out = std::tmpfile();
  v.a0.outcome = [&](const std::string&, int) {
    v.a0.health_down = true;  // the agent stops answering health once the first case is in
    return fake::Outcome::Completed;
  };
  const auto s = hc::run_campaign(v.c, v.o);
  std::fclose(v.o.out);
  EXPECT_EQ(s.completed, 1);
  EXPECT_EQ(s.pending, 2);
  EXPECT_EQ(s.infra_failed, 0);
  EXPECT_EQ(s.attempts_this_run, 1);
  ASSERT_EQ(s.unreachable.size(), 1u);
  EXPECT_THAT(s.unreachable[0], HasSubstr("vm0 (" + v.a0.url() + "): agent not answering GET /v1/health"));
  results::Db db(v.o.db_path, results::Db::Mode::ReadOnly);
  EXPECT_EQ(count(db, "SELECT count(*) FROM attempts"), 1);
}

TEST(RunnerResetInfra, ExhaustedInfraFailedCaseRunsAgainAuditedPlanUnchanged) {
  OneVm v(/*retries=*/0);
  const std::string x = "t-vm0-fast-structured-r1-delayed-activation";
  v.a0.outcome = [&](const std::string& id, int n) {
    return id == x && n == 1 ? fake::Outcome::InfraNoBundleInWarmup : fake::Outcome::Completed;
  };
  EXPECT_EQ(hc::run_campaign(v.c, v.o).infra_failed, 1);
  EXPECT_EQ(hc::run_campaign(v.c, v.o).attempts_this_run, 0);  // retries exhausted
  std::string sha_before;
  {
    results::Db db(v.o.db_path, results::Db::Mode::ReadWrite);
    sha_before = text(db, "SELECT value FROM campaign_meta WHERE key = 'schedule_sha256'");
    EXPECT_THROW(hc::reset_infra(db, x, " ", "bob"), std::invalid_argument);
    try {
      hc::reset_infra(db, "t-vm0-fast-structured-r1-static-zram", "agents were down", "bob");
      ADD_FAILURE() << "a completed case was reset";
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr("is completed, not infra_failed: nothing to reset"));
    }
    EXPECT_THROW(hc::reset_infra(db, "t-nope", "agents were down", "bob"), std::invalid_argument);
    EXPECT_EQ(count(db, "SELECT count(*) FROM attempts WHERE kind = 'reset-infra'"), 0);
    const auto ids = hc::reset_infra(db, "", "agents were down during the run", "bob");
    ASSERT_EQ(ids.size(), 1u);
    EXPECT_EQ(ids[0], x);
    EXPECT_EQ(text(db, "SELECT status || '/' || kind || '/' || host || '/' || json_extract(detail_json, '$.operator') "
                       "|| '/' || json_extract(detail_json, '$.reason') || '/' || "
                       "json_extract(detail_json, '$.previous_runs') FROM attempts WHERE kind = 'reset-infra'"),
              "reset_infra/reset-infra/operator/bob/agents were down during the run/1");
    EXPECT_THAT(hc::status_report(db), HasSubstr("  " + x + " (attempt 2): by bob: agents were down during the run"));
  }
  const auto s = hc::run_campaign(v.c, v.o);  // same campaign file: the plan is verified unchanged
  EXPECT_EQ(s.attempts_this_run, 1);
  EXPECT_EQ(s.completed, 3);
  EXPECT_EQ(v.a0.submissions()[x], 2);
  results::Db db(v.o.db_path, results::Db::Mode::ReadOnly);
  EXPECT_EQ(text(db, "SELECT value FROM campaign_meta WHERE key = 'schedule_sha256'"), sha_before);
  EXPECT_NO_THROW(hc::load_verified_plan(db));
  EXPECT_EQ(text(db, "SELECT group_concat(attempt || ':' || status || ':' || kind, ' ') FROM "
                     "(SELECT * FROM attempts WHERE case_id = '" + x + "' ORDER BY attempt)"),
            "1:infra_failed:run 2:reset_infra:reset-infra 3:completed:run");
}

TEST(RunnerResetInfra, HarnessResetInfraRefusesWithExit2AndNamesTheState) {
  TempDir d;
  write(d / "t.yaml", campaign_yaml(1, 1, 2));
  ASSERT_EQ(run_harness("plan " + (d / "t.yaml") + " --db " + (d / "c.db"), d / "out.txt").code, 0);
  const auto [rc, out] = run_harness(
      "reset-infra " + (d / "c.db") + " --case t-vm0-fast-structured-r1-static-zram --reason 'agents down'",
      d / "out.txt");
  EXPECT_EQ(rc, 2);
  EXPECT_THAT(out, HasSubstr("reset-infra: case 't-vm0-fast-structured-r1-static-zram' is pending, not infra_failed"));
  const auto [rc_all, out_all] =
      run_harness("reset-infra " + (d / "c.db") + " --reason 'agents down'", d / "out.txt");
  EXPECT_EQ(rc_all, 0);
  EXPECT_THAT(out_all, HasSubstr("0 case(s) reset"));
}

namespace {

// An agent outlives a DB (a real VM, a guest kept up between runs): a second campaign DB
// with the same campaign and the same agent must run its own cases, never import the
// first DB's results (found by the CI-check work: 0 POSTs on the second run).
TEST(RunnerFreshDb, ASecondDbAgainstTheSameAgentRunsItsOwnCases) {
  OneVm v;
  const auto first = hc::run_campaign(v.c, v.o);
  EXPECT_EQ(first.completed, 3);
  EXPECT_EQ(v.a0.posts(), 3);
  v.o.db_path = v.d / "second.db";
  const auto second = hc::run_campaign(v.c, v.o);
  EXPECT_EQ(second.completed, 3);
  EXPECT_EQ(second.attempts_this_run, 3);
  EXPECT_EQ(v.a0.posts(), 6);  // three new submissions, nothing adopted from the first DB
  results::Db a(v.d / "c.db", results::Db::Mode::ReadOnly);
  results::Db b(v.d / "second.db", results::Db::Mode::ReadOnly);
  const std::string ta = text(a, "SELECT value FROM campaign_meta WHERE key = 'db_tag'");
  const std::string tb = text(b, "SELECT value FROM campaign_meta WHERE key = 'db_tag'");
  EXPECT_EQ(ta.size(), 8u);
  EXPECT_NE(ta, tb);
  EXPECT_EQ(count(b, "SELECT count(*) FROM attempts WHERE kind = 'adopted'"), 0);
  EXPECT_EQ(count(b, "SELECT count(*) FROM attempts WHERE json_extract(detail_json, '$.agent_case_id') LIKE '%-" +
                         tb + "'"),
            3);
}

}  // namespace

namespace {

// An agent that marks its VM unusable after an unclean restoration gets
// no case (no attempt spent, cases pending), `harness status` says so, and the next run
// after the mark is cleared runs them.
TEST(RunnerUnusable, UncleanMarkLeavesCasesPendingUntilCleared) {
  OneVm v;
  v.a0.unclean = {{"case_id", "earlier-case"}, {"problems", {"cgroup harness/bg still exists"}}};
  const auto s = hc::run_campaign(v.c, v.o);
  EXPECT_EQ(s.attempts_this_run, 0);
  EXPECT_EQ(s.pending, 3);
  EXPECT_EQ(v.a0.posts(), 0);
  ASSERT_EQ(s.unusable.size(), 1u);
  EXPECT_THAT(s.unusable[0], HasSubstr("vm0 ("));
  EXPECT_THAT(s.unusable[0], HasSubstr("restoration of case earlier-case was unclean"));
  EXPECT_THAT(s.unusable[0], HasSubstr("DELETE /v1/unclean"));
  {
    results::Db db(v.o.db_path, results::Db::Mode::ReadOnly);
    EXPECT_EQ(count(db, "SELECT count(*) FROM attempts"), 0);
    EXPECT_THAT(hc::status_report(db), HasSubstr("vm0 UNUSABLE: the restoration of case earlier-case was unclean"));
  }
  v.a0.unclean = nullptr;  // the operator fixed the VM and cleared the mark
  const auto again = hc::run_campaign(v.c, v.o);
  EXPECT_EQ(again.completed, 3);
  EXPECT_TRUE(again.unusable.empty());
  results::Db db(v.o.db_path, results::Db::Mode::ReadOnly);
  EXPECT_THAT(hc::status_report(db), Not(HasSubstr("UNUSABLE")));
}

// Each case on a reused guest costs one GET /v1/health: the wait before the case, whose
// answer also gives the unclean mark and the boot id the case runs on (formerly asked for
// again right after the wait). 1 before scheduling + 1 per case.
TEST(RunnerHealth, OneHealthRequestPerCaseOnAReusedGuest) {
  OneVm v;
  v.a0.polls_to_finish = 0;
  v.a0.set_boot_id("boot-1");
  const auto s = hc::run_campaign(v.c, v.o);
  EXPECT_EQ(s.completed, 3);
  EXPECT_EQ(v.a0.health_gets.load(), 1 + 3);
  results::Db db(v.o.db_path, results::Db::Mode::ReadOnly);
  EXPECT_EQ(count(db, "SELECT count(*) FROM attempts WHERE json_extract(detail_json, '$.boot_id') = 'boot-1'"), 3);
}

// Clearing the unusable mark before a case writes only when there is a mark: on a database
// opened read-only, clearing an absent mark succeeds, clearing a present one is a write.
TEST(RunnerUnusable, ClearingAnAbsentMarkWritesNothing) {
  TempDir d;
  const std::string path = d / "c.db";
  { results::Db create(path, results::Db::Mode::Create); }
  results::Db ro(path, results::Db::Mode::ReadOnly);
  EXPECT_NO_THROW(hc::set_unusable_mark(ro, "vm0", ""));
  results::Db rw(path, results::Db::Mode::ReadWrite);
  hc::set_unusable_mark(rw, "vm0", "unclean");
  EXPECT_EQ(count(rw, "SELECT count(*) FROM campaign_meta WHERE key = 'unusable:vm0'"), 1);
  EXPECT_THROW(hc::set_unusable_mark(ro, "vm0", ""), results::DbError);
  hc::set_unusable_mark(rw, "vm0", "");
  EXPECT_EQ(count(rw, "SELECT count(*) FROM campaign_meta WHERE key = 'unusable:vm0'"), 0);
}

}  // namespace

// `harness check --baseline-db` runs only the candidate cases of an A/B plan: RunOptions::
// skip_cases leaves the named cases pending (counted as skipped, not pending, never
// submitted); a later run without the filter runs exactly them.
TEST(Runner, SkipCasesAreNotSubmittedAndStayPending) {
  OneVm v;
  const std::string skipped = "t-vm0-fast-structured-r1-delayed-activation";
  v.o.skip_cases = {skipped};
  std::FILE* progress = std::tmpfile();
  v.o.out = progress;
  const auto s = hc::run_campaign(v.c, v.o);
  std::rewind(progress);
  std::string lines;
  for (int ch; (ch = std::fgetc(progress)) != EOF;) lines += static_cast<char>(ch);
  std::fclose(progress);
  v.o.out = stderr;
  // The progress counts only the cases this run is to run: 2 of 2, the skipped one not "done".
  EXPECT_THAT(lines, HasSubstr("[2/2 done"));
  EXPECT_THAT(lines, ::testing::Not(HasSubstr("/3 done")));
  EXPECT_EQ(s.planned, 3);
  EXPECT_EQ(s.completed, 2);
  EXPECT_EQ(s.skipped, 1);
  EXPECT_EQ(s.pending, 0);
  const auto subs = v.a0.submissions();
  EXPECT_EQ(subs.size(), 2u);
  EXPECT_EQ(subs.count(skipped), 0u);
  {
    results::Db db(v.o.db_path, results::Db::Mode::ReadOnly);
    EXPECT_EQ(text(db, "SELECT state FROM schedule WHERE case_id = '" + skipped + "'"), "pending");
    EXPECT_EQ(count(db, "SELECT count(*) FROM attempts WHERE case_id = '" + skipped + "'"), 0);
  }
  v.o.skip_cases.clear();
  const auto s2 = hc::run_campaign(v.c, v.o);
  EXPECT_EQ(s2.completed, 3);
  EXPECT_EQ(s2.skipped, 0);
  EXPECT_EQ(s2.attempts_this_run, 1);
  EXPECT_EQ(v.a0.submissions().count(skipped), 1u);
}

// A silent agent (PROTOCOL.md "A silent agent"): from the pressure phase on the runner keeps
// asking within the case's own deadline; the network alone never decides an outcome. The
// pre-pressure grace (60 s in a campaign) is shortened to 200 ms so that the silences below
// outlast it many times over without a test waiting a minute.
namespace {

/// OneVm whose first case is held in its pressure phase, with boot id boot-1.
struct SilentVm : OneVm {
  explicit SilentVm(const std::string& extra = "") {
    if (!extra.empty()) c = fleet_campaign(d, {&a0}, campaign_yaml(1, 1, 2, extra));
    a0.set_boot_id("boot-1");
    a0.hold_submission = 1;
    o.silence.before_pressure = std::chrono::milliseconds(200);
  }
  /// The held case: the first of the schedule.
  std::string held() {
    results::Db db(o.db_path, results::Db::Mode::ReadOnly);
    return text(db, "SELECT case_id FROM schedule ORDER BY ordinal LIMIT 1");
  }
};

/// Waits until the runner follows the held case, makes the agent silent, and waits until
/// the runner's status polls have met the silence for `polls` answers and 5x the grace.
bool silence_past_the_grace(SilentVm& v, int polls) {
  if (!v.a0.wait_until_held(std::chrono::seconds(60))) return false;
  const auto t0 = std::chrono::steady_clock::now();
  v.a0.silent = true;
  return test_support::wait_until(
      [&] {
        return v.a0.silent_answers.load() >= polls &&
               std::chrono::steady_clock::now() - t0 > 5 * v.o.silence.before_pressure;
      },
      std::chrono::seconds(60));
}

}  // namespace

TEST(RunnerSilence, AgentSilentInPressureLongerThanTheGraceThenAnsweringIsCompletedAndImportedOnce) {
  SilentVm v;
  hc::RunSummary s;
  std::thread run([&] { s = hc::run_campaign(v.c, v.o); });
  const bool silenced = silence_past_the_grace(v, 8);  // >= 2 status requests of 4 tries each
  v.a0.silent = false;
  v.a0.release_hold();
  run.join();
  ASSERT_TRUE(silenced) << "the runner never met the silence";
  EXPECT_EQ(s.completed, 3);
  EXPECT_EQ(s.lost, 0);
  EXPECT_EQ(s.infra_failed, 0);
  EXPECT_EQ(s.attempts_this_run, 3);
  for (const auto& [id, n] : v.a0.submissions()) EXPECT_EQ(n, 1) << id;
  EXPECT_EQ(v.a0.bundle_downloads.load(), 3);  // imported once each
  const std::string x = v.held();
  results::Db db(v.o.db_path, results::Db::Mode::ReadOnly);
  EXPECT_EQ(text(db, "SELECT status FROM cases WHERE case_id = '" + x + "'"), "completed");
  EXPECT_EQ(text(db, "SELECT group_concat(status) FROM attempts WHERE case_id = '" + x + "'"), "completed");
  const std::string at = "FROM attempts WHERE case_id = '" + x + "'";
  EXPECT_EQ(count(db, "SELECT json_array_length(detail_json, '$.silence.episodes') " + at), 1);
  EXPECT_EQ(text(db, "SELECT json_extract(detail_json, '$.silence.episodes[0].phase') " + at), "pressure");
  EXPECT_GT(std::stod(text(db, "SELECT json_extract(detail_json, '$.silence.episodes[0].seconds') " + at)), 0.2 * 5);
  EXPECT_GT(count(db, "SELECT json_extract(detail_json, '$.silence.episodes[0].end_unix_ns') - "
                      "json_extract(detail_json, '$.silence.episodes[0].start_unix_ns') " + at),
            1'000'000'000LL);
  EXPECT_EQ(text(db, "SELECT json_extract(detail_json, '$.silence.boot_ids_seen') " + at), "[\"boot-1\"]");
  EXPECT_GT(count(db, "SELECT json_extract(detail_json, '$.silence.deadline_unix_ns') " + at), 0);
}

TEST(RunnerSilence, ANewBootIdAfterTheSilenceMakesTheCaseLost) {
  SilentVm v;
  hc::RunSummary s;
  std::thread run([&] { s = hc::run_campaign(v.c, v.o); });
  const bool silenced = silence_past_the_grace(v, 4);
  // The guest rebooted with its disk while the runner could not reach it: the restarted agent
  // settles the case and marks the VM unclean (as the runner contract has it), so the other
  // cases stay pending on an unusable VM.
  v.a0.reboot("boot-2");
  v.a0.silent = false;
  v.a0.release_hold();
  run.join();
  ASSERT_TRUE(silenced) << "the runner never met the silence";
  EXPECT_EQ(s.lost, 1);
  EXPECT_EQ(s.completed, 0);
  EXPECT_EQ(s.pending, 2);
  ASSERT_EQ(s.unusable.size(), 1u);
  for (const auto& [id, n] : v.a0.submissions()) EXPECT_EQ(n, 1) << id;  // never rerun
  const std::string x = v.held();
  results::Db db(v.o.db_path, results::Db::Mode::ReadOnly);
  EXPECT_EQ(text(db, "SELECT status FROM cases WHERE case_id = '" + x + "'"), "lost");
  EXPECT_THAT(text(db, "SELECT json_extract(outcome_json, '$.lost.reason') FROM cases WHERE case_id = '" + x + "'"),
              HasSubstr("rebooted while its agent was silent (boot id boot-1 -> boot-2)"));
  const std::string at = "FROM attempts WHERE case_id = '" + x + "'";
  EXPECT_EQ(text(db, "SELECT status " + at), "lost");
  EXPECT_EQ(text(db, "SELECT json_extract(detail_json, '$.silence.boot_ids_seen') " + at), "[\"boot-1\",\"boot-2\"]");
  EXPECT_EQ(text(db, "SELECT json_extract(detail_json, '$.phase') " + at), "pressure");
}

TEST(RunnerSilence, SilentPastTheCasesOwnDeadlineIsLostWithTheSilenceRecorded) {
  // Deadline = submission + 3 s start lead + 3 s of phases + 1 s restoration timeout + 0 s margin.
  SilentVm v("restoration_timeout_s: 1\n");
  v.o.silence.deadline_margin_s = 0;
  v.o.host_wait.total_s = 1;  // the agent stays silent: the other cases stay pending
  v.o.host_wait.first_backoff_ms = 100;
  hc::RunSummary s;
  std::thread run([&] { s = hc::run_campaign(v.c, v.o); });
  const bool silenced = silence_past_the_grace(v, 4);
  run.join();  // the agent never answers again: the deadline ends the case
  ASSERT_TRUE(silenced) << "the runner never met the silence";
  EXPECT_EQ(s.lost, 1);
  EXPECT_EQ(s.completed, 0);
  EXPECT_EQ(s.infra_failed, 0);
  EXPECT_EQ(s.pending, 2);
  const std::string x = v.held();
  results::Db db(v.o.db_path, results::Db::Mode::ReadOnly);
  EXPECT_EQ(text(db, "SELECT status FROM cases WHERE case_id = '" + x + "'"), "lost");
  EXPECT_THAT(text(db, "SELECT json_extract(outcome_json, '$.lost.reason') FROM cases WHERE case_id = '" + x + "'"),
              HasSubstr("the case's deadline passed (start lead + phases + restoration timeout + 0 s margin)"));
  const std::string at = "FROM attempts WHERE case_id = '" + x + "'";
  EXPECT_EQ(text(db, "SELECT json_extract(detail_json, '$.silence.episodes[0].phase') " + at), "pressure");
  EXPECT_EQ(text(db, "SELECT coalesce(json_extract(detail_json, '$.silence.episodes[0].end_unix_ns'), 'open') " + at),
            "open");
  // Lost only after the deadline: the last poll came after submission + 7 s.
  EXPECT_GE(count(db, "SELECT ended_unix_ns - json_extract(detail_json, '$.submitted_unix_ns') " + at),
            7'000'000'000LL);
  EXPECT_GE(count(db, "SELECT ended_unix_ns " + at),
            count(db, "SELECT json_extract(detail_json, '$.silence.deadline_unix_ns') " + at));
}
