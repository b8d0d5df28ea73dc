// Every assertion kind of `harness check` (harness/campaign/check/assertions.hpp) driven to
// FAIL on a campaign DB built to violate it, and to PASS on one just inside the bound
// (so that a flipped comparison or a sign error fails this test). For each kind:
//   - in process: evaluate_assertions + write_junit -> the <failure> element and its text;
//   - through the real `harness check DB --reuse` binary (all schedule rows completed, so no
//     host is needed): exit code 1 / 0 and the JUnit file it writes, whose test cases carry
//     the kernel, commits, accelerator, case times and every case's measured value.
// Without --reuse the same DB is refused (exit 2): it holds an earlier run.
// all_cases_completed is violated by a schedule row that is not completed: the binary
// would then try to run that case on a guest, so its exit code is checked in process only
// (same rule: exit 1 iff an assertion failed).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include "harness/campaign/check/assertions.hpp"
#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/store/campaign_db.hpp"
#include "harness/campaign/plan/schedule.hpp"
#include "results/db.hpp"
#include "tests/common/slurp.hpp"

namespace fs = std::filesystem;
using test_support::slurp;
namespace hc = harness::campaign;

namespace {

constexpr std::int64_t kSec = 1'000'000'000;
constexpr std::int64_t kPs = 100 * kSec;  // pressure phase start
constexpr std::int64_t kPe = 140 * kSec;  // pressure phase end
constexpr std::int64_t kDose = 96ll << 20;
constexpr const char* kCaseCommit = "abcdef0123456789abcdef0123456789abcdef01";
constexpr std::int64_t kStartUnixNs = 1'767'225'600'000'000'000;  // 2026-01-01T00:00:00Z

/// The assertions-only CI campaign (tests/vm/check/ci-triplet.yaml: one triplet) with one assertion.
std::string campaign_yaml(const std::string& assertion) {
  std::string y = slurp(std::string(HARNESS_SOURCE_DIR) + "/tests/vm/check/ci-triplet.yaml");
  const auto at = y.find("\nassertions:");
  if (at == std::string::npos) throw std::runtime_error("ci-triplet.yaml has no assertions: block");
  return y.substr(0, at) + "\nassertions:\n  - " + assertion + "\n";
}

/// What one test changes in an otherwise passing campaign DB.
struct Knobs {
  std::string not_completed_state;      ///< "" = every case completed
  double achieved_ratio = 1.0;          ///< bounded-reclaim achieved / requested
  bool achieved_null = false;
  double reclaim_s = 0.5;               ///< write duration
  double trigger_after_s = 10;          ///< trigger (or would_trigger) after pressure start
  int clean = 1;                        ///< restoration.clean
  std::optional<int> fg_oom_kill = 0;   ///< nullopt = never measured (NULL)
  double p99_ms = 20;                   ///< top two response times of each canary (p99 of 100, type 7)
};

class Check : public ::testing::Test {
 protected:
  fs::path dir;
  void SetUp() override {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');  // parameterized names hold a '/'
    dir = fs::temp_directory_path() / ("hk-check-test-" + std::to_string(::getpid()) + "-" + name);
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  /// Writes <dir>/<tag>.yaml and a DB holding its stored plan and the rows `k` asks for.
  std::pair<fs::path, fs::path> build(const std::string& tag, const std::string& assertion, const Knobs& k) {
    const fs::path yaml = dir / (tag + ".yaml"), dbp = dir / (tag + ".db");
    std::ofstream(yaml) << campaign_yaml(assertion);
    const hc::Campaign c = hc::load_campaign(yaml.string());
    const hc::Schedule s = hc::plan(c);
    results::Db db(dbp.string(), results::Db::Mode::Create);
    hc::store_plan(db, c, s);
    db.exec("BEGIN");  // one transaction: ~1000 rows, one fsync
    bool first = true;
    for (const auto& sc : s.cases) {
      const std::string state = first && !k.not_completed_state.empty() ? k.not_completed_state : "completed";
      first = false;
      exec(db, "UPDATE schedule SET state = ?2 WHERE case_id = ?1", {sc.case_id, state});
      exec(db, "INSERT INTO attempts(case_id, attempt, status, error) VALUES(?1, 1, ?2, ?3)",
           {sc.case_id, state,
            state == "completed" ? results::Value{} : results::Value{std::string("setup: mkdir: Operation not permitted")}});
      if (state != "completed") continue;
      exec(db,
           "INSERT INTO cases(case_id, campaign, vm, regime, repeat, configuration, status, spec_json, "
           "page_size_bytes, kernel_release, accelerator, source_commit, source_dirty, started_unix_ns, "
           "ended_unix_ns) VALUES(?1, 'ci-regression', ?2, ?3, 1, ?4, 'completed', '{}', 4096, '6.1.0-test-amd64', "
           "'tcg', ?5, 0, ?6, ?7)",
           {sc.case_id, sc.vm, sc.regime, sc.configuration, std::string(kCaseCommit), kStartUnixNs,
            kStartUnixNs + 90 * kSec});
      exec(db, "INSERT INTO phases(case_id, phase, start_ns, end_ns) VALUES(?1, 'pressure', ?2, ?3)",
           {sc.case_id, kPs, kPe});
      const bool static_zram = sc.configuration == "static-zram";
      exec(db, "INSERT INTO controller_events(case_id, t_ns, kind) VALUES(?1, ?2, ?3)",
           {sc.case_id, static_cast<std::int64_t>(kPs + std::llround(k.trigger_after_s * 1e9)),
            std::string(static_zram ? "would_trigger" : "trigger")});
      exec(db, "INSERT INTO restoration(case_id, start_ns, end_ns, clean, detail_json) VALUES(?1, 1, 2, ?2, ?3)",
           {sc.case_id, static_cast<std::int64_t>(k.clean),
            std::string(k.clean ? "{}" : R"({"problems":["/dev/zram0 still swapped on"]})")});
      for (int t = 0; t < 3; ++t)
        exec(db, "INSERT INTO telemetry(case_id, t_ns, phase, fg_oom_kill) VALUES(?1, ?2, 'pressure', ?3)",
             {sc.case_id, kPs + t * kSec,
              k.fg_oom_kill ? results::Value{static_cast<std::int64_t>(*k.fg_oom_kill)} : results::Value{}});
      for (const char* canary : {"compute", "sqlite"})
        for (int i = 0; i < 100; ++i) {
          const std::int64_t sched = kPs + static_cast<std::int64_t>(i) * 100'000'000;
          const double ms = i >= 98 ? k.p99_ms : 10.0;
          exec(db,
               "INSERT INTO canary_requests(case_id, canary, seq, scheduled_ns, wake_ns, completion_ns) "
               "VALUES(?1, ?2, ?3, ?4, ?4, ?5)",
               {sc.case_id, std::string(canary), static_cast<std::int64_t>(i), sched,
                static_cast<std::int64_t>(sched + std::llround(ms * 1e6))});
        }
      if (sc.configuration == "bounded-reclaim") {
        const std::int64_t start = kPs + 20 * kSec, dur = std::llround(k.reclaim_s * 1e9);
        exec(db,
             "INSERT INTO reclaim_actions(case_id, requested_bytes, start_ns, end_ns, duration_ns, write_errno, "
             "achieved_bytes) VALUES(?1, ?2, ?3, ?4, ?5, 0, ?6)",
             {sc.case_id, kDose, start, start + dur, dur,
              k.achieved_null ? results::Value{}
                              : results::Value{static_cast<std::int64_t>(
                                    std::llround(k.achieved_ratio * static_cast<double>(kDose)))}});
      }
    }
    db.exec("COMMIT");
    return {yaml, dbp};
  }

  /// Runs `sql` with `args` bound in order (monostate = NULL).
  static void exec(results::Db& db, const std::string& sql, const std::vector<results::Value>& args) {
    results::Stmt st(db, sql);
    for (std::size_t i = 0; i < args.size(); ++i) st.bind(static_cast<int>(i + 1), args[i]);
    st.run();
  }

  struct Outcome {
    bool passed = false;
    std::vector<std::string> failures;
    std::string junit;
  };
  /// In process: evaluate + JUnit.
  Outcome evaluate(const fs::path& yaml, const fs::path& dbp) {
    const hc::Campaign c = hc::load_campaign(yaml.string());
    results::Db db(dbp.string(), results::Db::Mode::ReadOnly);
    auto res = hc::evaluate_assertions(db, c);
    EXPECT_EQ(res.size(), 1u);
    const fs::path xml = dbp.string() + ".junit.xml";
    hc::write_junit(xml.string(), c.name, res);
    Outcome o;
    o.passed = res.at(0).passed;
    o.failures = res.at(0).failures;
    o.junit = slurp(xml);
    return o;
  }
  /// Through `harness check`: exit code and the JUnit file it wrote.
  std::pair<int, std::string> run_check(const fs::path& yaml, const fs::path& dbp, const std::string& flags = "--reuse") {
    const std::string harness = std::string(HARNESS_BINARY_DIR) + "/harness/cli/harness";
    const fs::path xml = dbp.string() + ".cli.xml";
    fs::remove(xml);
    const std::string cmd = harness + " check " + yaml.string() + " " + dbp.string() + " " + flags + " --junit " +
                            xml.string() + " --plain > " + dbp.string() + ".log 2>&1";
    const int rc = std::system(cmd.c_str());
    return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, slurp(xml)};
  }

  /// The kind's assertion fails on `bad` and passes on `good`, in process and via the CLI.
  void expect_fails_then_passes(const std::string& assertion, const Knobs& bad, const Knobs& good,
                                const std::string& failure_text, bool via_cli = true) {
    expect_verdict("bad", assertion, bad, false, failure_text, via_cli);
    expect_verdict("good", assertion, good, true, "", via_cli);
  }

  /// Builds the DB `k` describes and checks the verdict, the failure text (when failing),
  /// the JUnit <failure> element and (via_cli) the exit code of `harness check`.
  void expect_verdict(const std::string& tag, const std::string& assertion, const Knobs& k, bool pass,
                      const std::string& failure_text, bool via_cli) {
    SCOPED_TRACE(pass ? "DB just inside the bound" : "violating DB");
    auto [yaml, dbp] = build(tag, assertion, k);
    auto o = evaluate(yaml, dbp);
    std::string all;
    for (const auto& f : o.failures) all += f + "\n";
    EXPECT_EQ(o.passed, pass) << all;
    EXPECT_EQ(o.failures.empty(), pass) << all;
    if (!pass) {
      EXPECT_NE(all.find(failure_text), std::string::npos) << all;
    }
    EXPECT_EQ(o.junit.find("<failure message=") != std::string::npos, !pass) << o.junit;
    EXPECT_NE(o.junit.find(pass ? "failures=\"0\"" : "failures=\"1\""), std::string::npos) << o.junit;
    if (!via_cli) return;
    auto [rc, xml] = run_check(yaml, dbp);
    EXPECT_EQ(rc, pass ? 0 : 1) << slurp(dbp.string() + ".log");
    EXPECT_NE(xml.find("<testcase"), std::string::npos) << xml;
    EXPECT_EQ(xml.find("<failure message=") != std::string::npos, !pass) << xml;
    if (!pass) {
      EXPECT_NE(xml.find(failure_text), std::string::npos) << xml;
    }
  }
};

}  // namespace

/// One assertion kind: the DB that violates it, the DB just inside, the failure text.
struct KindCase {
  const char* name;
  const char* assertion;
  std::function<void(Knobs&)> violate, inside;
  const char* failure_text;
  bool via_cli = true;
};

class CheckKind : public Check, public ::testing::WithParamInterface<KindCase> {};

TEST_P(CheckKind, FailsWhenViolatedPassesJustInside) {
  const KindCase& k = GetParam();
  Knobs bad, good;
  k.violate(bad);
  k.inside(good);
  expect_fails_then_passes(k.assertion, bad, good, k.failure_text, k.via_cli);
}

INSTANTIATE_TEST_SUITE_P(
    EveryKind, CheckKind,
    ::testing::Values(
        // all_cases_completed: one case infra_failed (exit code: in process only, see top)
        KindCase{"all_cases_completed", "{kind: all_cases_completed}",
                 [](Knobs& k) { k.not_completed_state = "infra_failed"; }, [](Knobs&) {},
                 "infra_failed: setup: mkdir", false},
        KindCase{"reclaim_achieved_ratio", "{kind: reclaim_achieved_ratio, min: 0.8}",
                 [](Knobs& k) { k.achieved_ratio = 0.79; }, [](Knobs& k) { k.achieved_ratio = 0.81; },
                 "achieved 0.790 of the request"},
        KindCase{"reclaim_achieved_ratio_unmeasured", "{kind: reclaim_achieved_ratio, min: 0.8}",
                 [](Knobs& k) { k.achieved_null = true; }, [](Knobs&) {}, "achieved_bytes not measured"},
        KindCase{"reclaim_duration_s", "{kind: reclaim_duration_s, max: 1}", [](Knobs& k) { k.reclaim_s = 1.01; },
                 [](Knobs& k) { k.reclaim_s = 0.99; }, "memory.reclaim write took 1.010 s"},
        KindCase{"trigger_within_s", "{kind: trigger_within_s, max: 30}",
                 [](Knobs& k) { k.trigger_after_s = 30.5; }, [](Knobs& k) { k.trigger_after_s = 29.5; },
                 "trigger fired 30.5 s after"},
        KindCase{"restoration_clean", "{kind: restoration_clean}", [](Knobs& k) { k.clean = 0; }, [](Knobs&) {},
                 "restoration not clean"},
        KindCase{"no_foreground_oom", "{kind: no_foreground_oom}", [](Knobs& k) { k.fg_oom_kill = 1; },
                 [](Knobs&) {}, "1 foreground OOM kill(s)"},
        KindCase{"no_foreground_oom_unmeasured", "{kind: no_foreground_oom}",
                 [](Knobs& k) { k.fg_oom_kill = std::nullopt; }, [](Knobs&) {}, "oom_kill never measured"},
        // p99 (type 7) of 100 requests = the 99th sorted value when the top two are equal
        KindCase{"canary_p99_ms", "{kind: canary_p99_ms, max: 50}", [](Knobs& k) { k.p99_ms = 50.1; },
                 [](Knobs& k) { k.p99_ms = 49.9; }, "p99 50.10 ms"}),
    [](const ::testing::TestParamInfo<KindCase>& i) { return std::string(i.param.name); });

// The CLI on an all-completed DB (no host needed) exits 0 for all_cases_completed too.
TEST_F(Check, AllCasesCompletedViaCliOnACompletedCampaign) {
  auto [yaml, dbp] = build("good-cli", "{kind: all_cases_completed}", Knobs{});
  EXPECT_EQ(run_check(yaml, dbp).first, 0) << slurp(dbp.string() + ".log");
}

// CI never passes on stale data: a DB holding an earlier run is refused without --reuse
// (exit 2, nothing written, no JUnit), and judged with it.
TEST_F(Check, ExistingRunIsRefusedWithoutReuse) {
  auto [yaml, dbp] = build("stale", "{kind: canary_p99_ms, max: 50}", Knobs{});
  const auto before = fs::last_write_time(dbp);
  auto [rc, xml] = run_check(yaml, dbp, "");
  const std::string log = slurp(dbp.string() + ".log");
  EXPECT_EQ(rc, 2) << log;
  EXPECT_NE(log.find(dbp.string() + " already holds an earlier run (3 attempt(s), 3 case(s))"), std::string::npos) << log;
  EXPECT_NE(log.find("--reuse"), std::string::npos) << log;
  EXPECT_EQ(xml, "") << "no JUnit may be written for a refused run";
  EXPECT_EQ(fs::last_write_time(dbp), before);
  EXPECT_EQ(run_check(yaml, dbp, "--reuse").first, 0) << slurp(dbp.string() + ".log");
  EXPECT_NE(slurp(dbp.string() + ".log").find("reusing " + dbp.string()), std::string::npos);
}

// Each JUnit test case names what ran its cases and the measured numbers.
TEST_F(Check, JUnitCarriesKernelCommitAcceleratorTimesAndMeasuredValues) {
  Knobs k;
  k.p99_ms = 50.1;  // fails: the number and the bound must be in the failure message
  auto [yaml, dbp] = build("junit", "{kind: canary_p99_ms, max: 50}", k);
  auto [rc, xml] = run_check(yaml, dbp);
  EXPECT_EQ(rc, 1) << slurp(dbp.string() + ".log");
  for (const std::string& want : std::vector<std::string>{"<property name=\"kernel\" value=\"6.1.0-test-amd64\"/>", "<property name=\"accelerator\" value=\"tcg\"/>",
        std::string("<property name=\"source_commit\" value=\"") + kCaseCommit + "\"/>",
        "<property name=\"first_case_started_utc\" value=\"2026-01-01T00:00:00Z\"/>",
        "<property name=\"last_case_ended_utc\" value=\"2026-01-01T00:01:30Z\"/>", "<property name=\"harness_commit\"",
        "<property name=\"plan_sha256\" value=\"", "<property name=\"command_line\" value=\"", "timestamp=\"",
        ".compute_p99_ms\" value=\"50.1 ms\"/>", ".sqlite_p99_ms\" value=\"50.1 ms\"/>",
        "<failure message=\"ci-regression-", "p99 50.10 ms over 100 pressure-phase requests (&lt;= 50 allowed)",
        "kernel 6.1.0-test-amd64, accelerator tcg, commit " + std::string(kCaseCommit) + ", attempt 1, "
        "2026-01-01T00:00:00Z .. 2026-01-01T00:01:30Z"})
    EXPECT_NE(xml.find(want), std::string::npos) << "missing: " << want << "\n" << xml;
  // Every case's value is listed, passing ones too (3 cases x 2 canaries).
  std::size_t n = 0;
  for (auto at = xml.find("_p99_ms\" value="); at != std::string::npos; at = xml.find("_p99_ms\" value=", at + 1)) ++n;
  EXPECT_EQ(n, 6u) << xml;
}
