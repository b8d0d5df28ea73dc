// The `rules` policy (harness/case/policies/rules.cpp) and its building blocks
// (harness/case/rules/), driven tick by tick through the Controller over telemetry captured in
// a real guest, writes landing in a scratch copy of the 6.1 capture tree (case_scratch.hpp):
//   - bg PSI some/full totals and read times: the 32 recorded reads of
//     fixtures/6.1.0-57-cloud-amd64/psi-sequence (idle, a 300 MiB touch loop under
//     memory.max=200M with zram, idle again), ticks on an exact 1 s grid from the first read;
//   - bg memory.current and refaults: the capture tree's bg reading (constant), varied per
//     test where a detector needs it.
// First the equivalence the rules policy promises: the study's delayed-activation and bounded-reclaim
// written as rules give the built-in policies' controller events (kinds, times and details:
// trigger_t_ns, requested_bytes, the write's record) and outcome_json keys and values over the
// same ticks; then each detector, mode and action on
// its own; then the validation errors.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "harness/case/host/backend.hpp"
#include "harness/case/run/case_outcome.hpp"
#include "harness/case/control/controller.hpp"
#include "harness/case/control/policy.hpp"
#include "harness/case/control/reclaim_writer.hpp"
#include "harness/case/rules/blocks.hpp"
#include "harness/case/spec/spec.hpp"
#include "harness/kernel/keyed.hpp"
#include "harness/kernel/psi.hpp"
#include "tests/common/fixture_file.hpp"
#include "tests/common/policy_run.hpp"
#include "tests/common/problem_text.hpp"
#include "tests/unit/case/case_scratch.hpp"

using harness::case_::ControllerEvent;
using harness::case_::TelemetrySample;
using json = nlohmann::json;

namespace {
constexpr std::int64_t kS = 1'000'000'000;
constexpr std::int64_t kMiB = 1 << 20;
using test_support::captured_bg_current;
using test_support::tick_of;
const std::string& kBg = test_support::kBgCgroup;

/// The 32 recorded ticks (tests/common/policy_run.hpp), 1,000 refaults on each.
std::vector<TelemetrySample> captured() { return test_support::captured_ticks(1000); }

/// Everything one run produced: the events (ticks' and finish()'s, sorted by time as the
/// executor sorts them), the rows and the outcome_json the executor would write.
struct Trace {
  std::vector<ControllerEvent> events;
  std::vector<harness::case_::ReclaimRow> rows;
  json outcome;
  std::optional<std::string> note;
  harness::case_::ZramAtStart zram = harness::case_::ZramAtStart::On;
  std::vector<const ControllerEvent*> of(const std::string& kind) const {
    std::vector<const ControllerEvent*> v;
    for (const auto& e : events)
      if (e.kind == kind) v.push_back(&e);
    return v;
  }
};

struct Options {
  int p0 = 5, p1 = 25;            ///< pressure phase: ticks [p0, p1)
  std::int64_t settle_ns = 0;     ///< reclaim settle
  bool prepare_backend = false;   ///< prepare the scratch's zram (swap syscalls stubbed)
};

/// Drives policy `name` with `params` over `samples` as the executor does
/// (test_support::run_policy), events sorted by time, outcome as outcome_json.
Trace drive(const case_test::Scratch& t, const std::string& name, const json& params, std::vector<TelemetrySample> samples,
          Options o = {}) {
  // Prepared: zram1 of the scratch tree, the swap syscalls stubbed (a test's own faults,
  // e.g. on memory.reclaim, are then its only ones: FaultScope clears them all).
  std::optional<harness::kernel::FaultScope> f;
  test_support::PolicyRunOptions ro{o.p0, o.p1, o.settle_ns, {}};
  if (o.prepare_backend) {
    f.emplace();
    case_test::stub_swap(*f);
    ro.before_ticks = [](harness::case_::Backend& backend) {
      std::vector<harness::case_::StepRecord> steps;
      backend.prepare(steps);
    };
  }
  auto run = test_support::run_policy(t.root(), case_test::backend_spec(), name, params, std::move(samples), ro);
  std::stable_sort(run.bundle.events.begin(), run.bundle.events.end(),
                   [](const ControllerEvent& a, const ControllerEvent& z) { return a.t_ns < z.t_ns; });
  Trace r;
  r.events = std::move(run.bundle.events);
  r.rows = std::move(run.bundle.reclaims);
  r.outcome = harness::case_::outcome_json(run.outcome);
  r.note = run.note;
  r.zram = run.zram;
  return r;
}

/// The ticks at which rule `i` decided (its `rule` events), and what.
std::vector<std::size_t> rule_ticks(const Trace& r, const std::vector<TelemetrySample>& s, int rule = 0,
                                    const std::string& decision = "act") {
  std::vector<std::size_t> v;
  for (const auto* e : r.of("rule"))
    if (e->detail.at("rule") == rule && e->detail.at("decision") == decision) v.push_back(tick_of(s, e->t_ns));
  return v;
}

/// Events whose time is a tick's (the controller's) compared in full; events stamped with the
/// clock when they happen (backend_on, reclaim_start, reclaim_end) by kind, place and detail
/// (expect_same_detail: clock readings aside).
bool tick_timed(const std::string& kind) {
  return kind == "window" || kind == "trigger" || kind == "would_trigger" || kind == "error";
}

/// Every value of `j` that is a reading of the clock when it happened (a write's or a step's
/// start, end, duration, CPU time), nulled: they differ run to run. Tick times stay.
json without_clock(json j) {
  static const std::set<std::string> clock{"start_ns", "end_ns", "duration_ns", "write_cpu_ns", "write_cpu_us"};
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) it.value() = clock.count(it.key()) ? json() : without_clock(it.value());
  } else if (j.is_array()) {
    for (auto& x : j) x = without_clock(x);
  }
  return j;
}

/// The keys a rule's action adds to a built-in event's detail (the rule that acted and on what
/// tick, and the write's place in the arm's writes): nothing else may differ.
const std::set<std::string> kRuleKeys{"policy", "rule", "decision_t_ns", "write_seq"};

/// A clock-stamped event (backend_on, reclaim_start, reclaim_end) of the rule against the
/// built-in's: every field of the built-in's detail, with its value but for clock readings,
/// and only the rule's own keys beside them.
void expect_same_detail(const ControllerEvent& builtin, const ControllerEvent& composed) {
  const json a = without_clock(builtin.detail), b = without_clock(composed.detail);
  ASSERT_TRUE(a.is_object() && b.is_object()) << a.dump() << " / " << b.dump();
  for (auto it = a.begin(); it != a.end(); ++it) {
    ASSERT_TRUE(b.contains(it.key())) << "the rule's " << composed.kind << " lacks " << it.key() << ": " << b.dump();
    EXPECT_EQ(b.at(it.key()), it.value()) << it.key();
  }
  for (auto it = b.begin(); it != b.end(); ++it)
    if (!a.contains(it.key())) {
      EXPECT_TRUE(kRuleKeys.count(it.key())) << "the rule's " << composed.kind << " adds " << it.key();
    }
}

void expect_same_controller_record(const Trace& builtin, const Trace& composed) {
  EXPECT_EQ(builtin.zram, composed.zram);
  EXPECT_EQ(builtin.note.has_value(), composed.note.has_value());
  std::vector<const ControllerEvent*> a, b;
  for (const auto& e : builtin.events) a.push_back(&e);
  for (const auto& e : composed.events)
    if (e.kind != "rule") b.push_back(&e);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE(fmt::format("event {}: {} / {}", i, a[i]->kind, b[i]->kind));
    EXPECT_EQ(a[i]->kind, b[i]->kind);
    if (!tick_timed(a[i]->kind)) {
      expect_same_detail(*a[i], *b[i]);
      continue;
    }
    EXPECT_EQ(a[i]->t_ns, b[i]->t_ns);
    EXPECT_EQ(a[i]->some_total_us, b[i]->some_total_us);
    EXPECT_EQ(a[i]->delta_us, b[i]->delta_us);
    EXPECT_EQ(a[i]->counting, b[i]->counting);
    EXPECT_EQ(a[i]->consecutive, b[i]->consecutive);
    json da = a[i]->detail, db = b[i]->detail;  // a would_trigger's note names the policy
    if (da.is_object()) da.erase("note");
    if (db.is_object()) db.erase("note");
    EXPECT_EQ(da, db);
  }
  // The outcome: the same keys, and the same values but for clock readings.
  std::set<std::string> ka, kb;
  for (auto it = builtin.outcome.begin(); it != builtin.outcome.end(); ++it) ka.insert(it.key());
  for (auto it = composed.outcome.begin(); it != composed.outcome.end(); ++it) kb.insert(it.key());
  EXPECT_EQ(ka, kb);
  EXPECT_EQ(without_clock(builtin.outcome), without_clock(composed.outcome))
      << builtin.outcome.dump(1) << "\n---\n" << composed.outcome.dump(1);
}

json rule(json when, json act, json mode = "once") { return {{"when", std::move(when)}, {"do", std::move(act)}, {"mode", std::move(mode)}}; }
json rules_params(json list, const std::string& zram = "on") { return {{"rules", std::move(list)}, {"zram_at_start", zram}}; }
const json kTrigger = {{"psi_window_trigger", json::object()}};
const json kEveryTick = {{"cooldown_s", 0.001}};
}  // namespace

// ---- the study's two acting arms, written as rules ----------------------------------------------

TEST(RulesEquivalence, DelayedActivationAsARule) {
  const auto s = captured();
  case_test::Scratch t1, t2;
  const Trace builtin = drive(t1, "delayed-activation", json::object(), s, {5, 25, 0, true});
  const Trace composed = drive(t2, "rules", rules_params({rule(kTrigger, {{"zram_on", json::object()}})}, "prepared"), s,
                          {5, 25, 0, true});
  ASSERT_EQ(builtin.of("trigger").size(), 1u);
  EXPECT_EQ(tick_of(s, builtin.of("trigger")[0]->t_ns), 9u);
  ASSERT_EQ(builtin.of("backend_on").size(), 1u);
  EXPECT_EQ(builtin.of("backend_on")[0]->detail.at("step").at("errno"), 0);
  expect_same_controller_record(builtin, composed);
  // The one decision, at the trigger's tick, and its swapon.
  ASSERT_EQ(composed.of("rule").size(), 1u);
  EXPECT_EQ(composed.of("rule")[0]->t_ns, builtin.of("trigger")[0]->t_ns);
  EXPECT_EQ(composed.of("rule")[0]->detail.at("decision"), "act");
  EXPECT_EQ(composed.of("rule")[0]->detail.at("inputs").at("consecutive"), 3);
  EXPECT_EQ(without_clock(composed.of("backend_on")[0]->detail.at("step")),
            without_clock(builtin.of("backend_on")[0]->detail.at("step")));
  EXPECT_EQ(composed.outcome.at("trigger").at("kind"), "trigger");
  EXPECT_EQ(composed.outcome.at("backend_on").at("errno"), 0);
}

TEST(RulesEquivalence, BoundedReclaimAsARuleAlsoWhenAReadFails) {
  auto s = captured();
  // bg memory.pressure unreadable at tick 8: an `error` event, the run reset; windows 10
  // (baseline 9) ... the trigger fires later, at the same tick for both.
  s[8].bg_some_us.reset();
  case_test::Scratch t1, t2;
  const Trace builtin = drive(t1, "bounded-reclaim", {{"dose_mib", 96}}, s);
  const Trace composed = drive(t2, "rules", rules_params({rule(kTrigger, {{"reclaim", {{"mib", 96}}}})}), s);
  ASSERT_EQ(builtin.of("error").size(), 1u);
  ASSERT_EQ(builtin.of("trigger").size(), 1u);
  EXPECT_GT(tick_of(s, builtin.of("trigger")[0]->t_ns), 9u);
  expect_same_controller_record(builtin, composed);
  ASSERT_EQ(composed.of("rule").size(), 1u);
  EXPECT_EQ(composed.of("rule")[0]->t_ns, builtin.of("trigger")[0]->t_ns);
}

TEST(RulesEquivalence, BoundedReclaimAsARule) {
  const auto s = captured();
  case_test::Scratch t1, t2;
  const Trace builtin = drive(t1, "bounded-reclaim", {{"dose_mib", 96}}, s);
  const Trace composed = drive(t2, "rules", rules_params({rule(kTrigger, {{"reclaim", {{"mib", 96}}}})}), s);
  ASSERT_EQ(builtin.of("reclaim_start").size(), 1u);
  ASSERT_EQ(builtin.of("reclaim_end").size(), 1u);
  expect_same_controller_record(builtin, composed);
  // The time its detector fired: the study's trigger detector's is the trigger's tick.
  ASSERT_EQ(composed.of("reclaim_start").size(), 1u);
  EXPECT_EQ(composed.of("reclaim_start")[0]->detail.at("trigger_t_ns"), builtin.of("trigger")[0]->t_ns);
  EXPECT_EQ(builtin.of("reclaim_start")[0]->detail.at("trigger_t_ns"), builtin.of("trigger")[0]->t_ns);
  ASSERT_EQ(composed.rows.size(), 1u);
  ASSERT_EQ(builtin.rows.size(), 1u);
  EXPECT_EQ(composed.rows[0].requested_bytes, 96 * kMiB);
  EXPECT_EQ(composed.rows[0].requested_bytes, builtin.rows[0].requested_bytes);
  EXPECT_EQ(composed.rows[0].write_errno, builtin.rows[0].write_errno);
  EXPECT_EQ(composed.rows[0].achieved_bytes, builtin.rows[0].achieved_bytes);
  EXPECT_EQ(composed.rows[0].pgsteal_before, builtin.rows[0].pgsteal_before);
  EXPECT_EQ(composed.outcome.at("reclaim").at("requested_bytes"), 96 * kMiB);
  EXPECT_EQ(t2.get(kBg + "/memory.reclaim"), t1.get(kBg + "/memory.reclaim"));
  ASSERT_EQ(composed.of("rule").size(), 1u);
  EXPECT_EQ(composed.of("rule")[0]->t_ns, builtin.of("trigger")[0]->t_ns);
  EXPECT_EQ(composed.of("rule")[0]->detail.at("requested_bytes"), 96 * kMiB);
}

TEST(RulesEquivalence, StaticZramAsNoRules) {
  const auto s = captured();
  case_test::Scratch t1, t2;
  const Trace builtin = drive(t1, "static-zram", json::object(), s);
  const Trace composed = drive(t2, "rules", rules_params(json::array()), s);
  expect_same_controller_record(builtin, composed);
  EXPECT_EQ(composed.outcome.at("trigger").at("kind"), "would_trigger");
}

// ---- detectors -------------------------------------------------------------------------------

TEST(RulesDetectors, PsiWindowTriggerTheCasesOrItsOwnParameters) {
  const auto s = captured();
  case_test::Scratch t;
  // The case's trigger: fires at tick 9 (windows 7, 8, 9 count), holds from then on.
  Trace r = drive(t, "rules", rules_params({rule(kTrigger, {{"nothing", json::object()}}, kEveryTick)}), s);
  std::vector<std::size_t> want;
  for (std::size_t k = 9; k < s.size(); ++k) want.push_back(k);
  EXPECT_EQ(rule_ticks(r, s), want);
  EXPECT_FALSE(r.note);
  // Its own parameters: 5 windows in a row. Windows 7-10 count, but the read of tick 11 came
  // 1.21 s after tick 10's (uptime 13.93 -> 15.14): an irregular window, which resets the run
  // (trigger.hpp); windows 12-16 count -> tick 16. The arm no longer acts at the case's trigger.
  r = drive(t, "rules", rules_params({rule({{"psi_window_trigger", {{"consecutive_windows", 5}}}}, {{"nothing", json::object()}})}), s);
  EXPECT_EQ(rule_ticks(r, s), std::vector<std::size_t>{16});
  ASSERT_TRUE(r.note);
  EXPECT_EQ(r.of("would_trigger").size(), 1u);
  EXPECT_EQ(r.of("rule")[0]->detail.at("inputs").at("consecutive_windows"), 5);
  // A growth no window reaches (0.9 s of stall in a 1 s window): never.
  r = drive(t, "rules", rules_params({rule({{"psi_window_trigger", {{"min_increase_us", 900'000}}}}, {{"nothing", json::object()}})}), s);
  EXPECT_TRUE(r.of("rule").empty());
  // Pressure only over the idle tail: never (armed for the pressure phase only).
  r = drive(t, "rules", rules_params({rule(kTrigger, {{"nothing", json::object()}})}), s, {24, 31});
  EXPECT_TRUE(r.of("rule").empty());
}

TEST(RulesDetectors, PsiSomeAndFullOverTheLastWindows) {
  const auto s = captured();
  case_test::Scratch t;
  for (const std::string kind : {"some", "full"})
    for (int windows : {1, 3})
      for (double above : {5.0, 40.0}) {
        SCOPED_TRACE(fmt::format("{} {} {}", kind, windows, above));
        const json det = {{"psi", {{"kind", kind}, {"windows", windows}, {"above_pct", above}}}};
        const Trace r = drive(t, "rules", rules_params({rule(det, {{"nothing", json::object()}}, kEveryTick)}), s);
        std::vector<std::size_t> want;
        for (std::size_t k = 5; k < s.size(); ++k) {  // ticks of the pressure and recovery phases
          if (k < static_cast<std::size_t>(windows)) continue;
          const auto& a = s[k - static_cast<std::size_t>(windows)];
          const std::int64_t d = kind == "some" ? *s[k].bg_some_us - *a.bg_some_us : *s[k].bg_full_us - *a.bg_full_us;
          const double pct = 100.0 * static_cast<double>(d) * 1000.0 / static_cast<double>(*s[k].read_ns - *a.read_ns);
          if (pct > above) want.push_back(k);
        }
        EXPECT_EQ(rule_ticks(r, s), want);
        EXPECT_FALSE(want.empty());
      }
  // below_pct: the complement over the same ticks (idle ticks hold).
  const Trace r = drive(t, "rules", rules_params({rule({{"psi", {{"below_pct", 5}}}}, {{"nothing", json::object()}}, kEveryTick)}), s);
  for (std::size_t k : rule_ticks(r, s)) EXPECT_LT(*s[k].bg_some_us - *s[k - 1].bg_some_us, 50'000) << k;
  EXPECT_FALSE(rule_ticks(r, s).empty());
}

TEST(RulesDetectors, MemoryCurrentAboveAndBelow) {
  auto s = captured();
  for (std::size_t k = 0; k < s.size(); ++k) s[k].bg_current_bytes = static_cast<std::int64_t>(k) * 10 * kMiB;  // 10 MiB per tick
  s[20].bg_current_bytes.reset();  // not read: does not hold
  case_test::Scratch t;
  Trace r = drive(t, "rules", rules_params({rule({{"memory_current", {{"above_mib", 150}}}}, {{"nothing", json::object()}}, kEveryTick)}), s);
  std::vector<std::size_t> want;
  for (std::size_t k = 16; k < s.size(); ++k)
    if (k != 20) want.push_back(k);
  EXPECT_EQ(rule_ticks(r, s), want);
  r = drive(t, "rules", rules_params({rule({{"memory_current", {{"below_mib", 80}}}}, {{"nothing", json::object()}}, kEveryTick)}), s);
  EXPECT_EQ(rule_ticks(r, s), (std::vector<std::size_t>{5, 6, 7}));
  EXPECT_EQ(r.of("rule")[0]->detail.at("inputs").at("memory_current_bytes"), 50 * kMiB);
}

TEST(RulesDetectors, RefaultsPerWindow) {
  auto s = captured();
  // A burst of 30,000 refaults between ticks 12 and 13, 1,000 per tick elsewhere from tick 20.
  std::int64_t total = 1000;
  for (std::size_t k = 0; k < s.size(); ++k) {
    if (k == 13) total += 30'000;
    if (k >= 20) total += 1'000;
    s[k].bg_workingset_refault_anon = total;
  }
  case_test::Scratch t;
  Trace r = drive(t, "rules", rules_params({rule({{"refaults", {{"above_pages", 20'000}}}}, {{"nothing", json::object()}}, kEveryTick)}), s);
  EXPECT_EQ(rule_ticks(r, s), std::vector<std::size_t>{13});
  EXPECT_EQ(r.of("rule")[0]->detail.at("inputs").at("refaults"), 30'000);
  // Averaged over 2 windows: 15,000 per window at ticks 13 and 14.
  r = drive(t, "rules", rules_params({rule({{"refaults", {{"windows", 2}, {"above_pages", 10'000}}}}, {{"nothing", json::object()}}, kEveryTick)}), s);
  EXPECT_EQ(rule_ticks(r, s), (std::vector<std::size_t>{13, 14}));
  r = drive(t, "rules", rules_params({rule({{"refaults", {{"above_pages", 500}}}}, {{"nothing", json::object()}}, kEveryTick)}), s);
  std::vector<std::size_t> want{13};
  for (std::size_t k = 20; k < s.size(); ++k) want.push_back(k);
  EXPECT_EQ(rule_ticks(r, s), want);
}

TEST(RulesDetectors, TimerSincePressureStart) {
  const auto s = captured();
  case_test::Scratch t;
  const Trace r = drive(t, "rules", rules_params({rule({{"timer", {{"after_s", 3}, {"before_s", 6}}}}, {{"nothing", json::object()}}, kEveryTick)}), s);
  EXPECT_EQ(rule_ticks(r, s), (std::vector<std::size_t>{8, 9, 10}));  // pressure from tick 5
  EXPECT_EQ(r.of("rule")[0]->detail.at("inputs").at("since_pressure_start_ns"), 3 * kS);
}

TEST(RulesDetectors, MemAvailableFromMeminfo) {
  const auto s = captured();
  case_test::Scratch t;  // MemAvailable 617,464 of 995,596 kB: 62.0 %
  Trace r = drive(t, "rules", rules_params({rule({{"mem_available", {{"below_pct", 70}}}}, {{"nothing", json::object()}})}), s);
  ASSERT_EQ(rule_ticks(r, s), std::vector<std::size_t>{5});
  EXPECT_NEAR(r.of("rule")[0]->detail.at("inputs").at("pct").get<double>(), 100.0 * 617464 / 995596, 1e-9);
  r = drive(t, "rules", rules_params({rule({{"mem_available", {{"below_pct", 50}}}}, {{"nothing", json::object()}})}), s);
  EXPECT_TRUE(r.of("rule").empty());
  std::filesystem::remove(t.root() / "proc/meminfo");  // unreadable: does not hold
  r = drive(t, "rules", rules_params({rule({{"mem_available", {{"below_pct", 70}}}}, {{"nothing", json::object()}})}), s);
  EXPECT_TRUE(r.of("rule").empty());
}

// ---- modes -----------------------------------------------------------------------------------

TEST(RulesModes, OnceEveryAndCooldown) {
  const auto s = captured();
  case_test::Scratch t;
  const json always = {{"timer", {{"after_s", 0}}}};
  const json nothing = {{"nothing", json::object()}};
  // Ticks 5..31 are pressure and recovery.
  Trace r = drive(t, "rules", rules_params({rule(always, nothing, "once")}), s);
  EXPECT_EQ(rule_ticks(r, s), std::vector<std::size_t>{5});
  // every 5 s from the rule's first tick (5): judged at 10, 15, 20, 25, 30.
  r = drive(t, "rules", rules_params({rule(always, nothing, {{"every_s", 5}})}), s);
  EXPECT_EQ(rule_ticks(r, s), (std::vector<std::size_t>{10, 15, 20, 25, 30}));
  // every 5 s, but the detector holds only from 12 s: judged at 10 (no), 15, 20, ...
  r = drive(t, "rules", rules_params({rule({{"timer", {{"after_s", 7}}}}, nothing, {{"every_s", 5}})}), s);
  EXPECT_EQ(rule_ticks(r, s), (std::vector<std::size_t>{15, 20, 25, 30}));
  // cooldown 5 s: acts at once when it holds (12), then 5 s after each act.
  r = drive(t, "rules", rules_params({rule({{"timer", {{"after_s", 7}}}}, nothing, {{"cooldown_s", 5}})}), s);
  EXPECT_EQ(rule_ticks(r, s), (std::vector<std::size_t>{12, 17, 22, 27}));
  // Two rules: each judged on its own, in list order within a tick.
  r = drive(t, "rules", rules_params({rule(always, nothing, "once"), rule({{"timer", {{"after_s", 0}}}}, nothing, "once")}), s);
  ASSERT_EQ(r.of("rule").size(), 2u);
  EXPECT_EQ(r.of("rule")[0]->detail.at("rule"), 0);
  EXPECT_EQ(r.of("rule")[1]->detail.at("rule"), 1);
  EXPECT_EQ(r.of("rule")[0]->t_ns, r.of("rule")[1]->t_ns);
  EXPECT_EQ(r.of("rule")[1]->detail.at("mode"), "once");
}

// ---- actions ---------------------------------------------------------------------------------

TEST(RulesActions, ReclaimAFractionOfMemoryCurrentEachTime) {
  const auto s = captured();
  case_test::Scratch t;
  harness::case_::ReclaimWriter::InlineScope inline_writes;
  const Trace r = drive(t, "rules", rules_params({rule({{"timer", {{"after_s", 0}}}}, {{"reclaim", {{"fraction", 0.01}}}}, {{"every_s", 10}})}), s);
  const auto want = static_cast<std::int64_t>(std::floor(0.01 * static_cast<double>(captured_bg_current())));
  EXPECT_EQ(rule_ticks(r, s), (std::vector<std::size_t>{15, 25}));
  ASSERT_EQ(r.rows.size(), 2u);
  ASSERT_EQ(r.of("reclaim_start").size(), 2u);
  ASSERT_EQ(r.of("reclaim_end").size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(r.rows[i].requested_bytes, want);
    EXPECT_EQ(r.rows[i].write_errno, 0);
    EXPECT_EQ(r.of("rule")[i]->detail.at("requested_bytes"), want);
    EXPECT_EQ(r.of("rule")[i]->detail.at("output").at("write_seq"), static_cast<int>(i) + 1);
    EXPECT_EQ(r.of("reclaim_end")[i]->detail.at("write_seq"), static_cast<int>(i) + 1);
    EXPECT_EQ(r.of("reclaim_end")[i]->detail.at("rule"), 0);
    EXPECT_EQ(r.of("reclaim_end")[i]->detail.at("requested_bytes"), want);
  }
  EXPECT_TRUE(r.outcome.at("reclaim").is_null()) << "two writes: each a row, none the study's single record";
  EXPECT_EQ(t.get(kBg + "/memory.reclaim"), std::to_string(want));
}

TEST(RulesActions, ReclaimSkipsWhileTheWriteSettles) {
  const auto s = captured();
  case_test::Scratch t;
  // Real writer thread, 1.5 s settle: the ticks right after the write (microseconds later here) skip.
  const Trace r = drive(t, "rules", rules_params({rule({{"timer", {{"after_s", 0}}}}, {{"reclaim", {{"bytes", 4096}}}}, kEveryTick)}),
                      std::vector<TelemetrySample>(s.begin(), s.begin() + 9), {5, 8, 1'500'000'000});
  EXPECT_EQ(rule_ticks(r, s), std::vector<std::size_t>{5});
  EXPECT_EQ(rule_ticks(r, s, 0, "skip"), (std::vector<std::size_t>{6, 7, 8}));
  for (const auto* e : r.of("rule"))
    if (e->detail.at("decision") == "skip") {
      EXPECT_EQ(e->detail.at("reason"), "the previous write (or its settle) is still in flight");
      EXPECT_EQ(e->detail.at("requested_bytes"), 0);
    }
  ASSERT_EQ(r.rows.size(), 1u);  // collected by finish()
  EXPECT_TRUE(r.rows[0].pgsteal_settled);
  EXPECT_EQ(r.outcome.at("reclaim").at("requested_bytes"), 4096);
}

TEST(RulesActions, AFailedReclaimWriteIsData) {
  const auto s = captured();
  case_test::Scratch t;
  harness::case_::ReclaimWriter::InlineScope inline_writes;
  harness::kernel::FaultScope f;
  f.fail("harness/bg/memory.reclaim", EAGAIN);
  const Trace r = drive(t, "rules", rules_params({rule(kTrigger, {{"reclaim", {{"mib", 32}}}})}), s);
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].write_errno, EAGAIN);
  EXPECT_EQ(r.of("reclaim_end")[0]->detail.at("write_errno"), EAGAIN);
}

TEST(RulesActions, MemoryHighSetToAFractionAndRestored) {
  const auto s = captured();
  case_test::Scratch t;
  EXPECT_EQ(t.get(kBg + "/memory.high"), "max\n");
  const Trace r = drive(t, "rules", rules_params({rule(kTrigger, {{"memory_high", {{"fraction", 0.9}}}})}), s);
  const auto high = static_cast<std::int64_t>(std::floor(0.9 * static_cast<double>(captured_bg_current())));
  ASSERT_EQ(r.of("rule").size(), 1u);
  EXPECT_EQ(r.of("rule")[0]->detail.at("output").at("memory_high_bytes"), high);
  EXPECT_EQ(r.of("rule")[0]->detail.at("output").at("old_memory_high"), "max");
  ASSERT_EQ(r.of("memory_high_set").size(), 1u);
  EXPECT_EQ(r.of("memory_high_set")[0]->detail.at("errno"), 0);
  EXPECT_EQ(r.of("memory_high_set")[0]->detail.at("memory_high_bytes"), high);
  ASSERT_EQ(r.of("memory_high_restore").size(), 1u);
  EXPECT_EQ(r.of("memory_high_restore")[0]->detail.at("memory_high"), "max");
  // A cgroup file holds the last value; the scratch file keeps the longer value's tail.
  EXPECT_EQ(t.get(kBg + "/memory.high"), "max" + std::to_string(high).substr(3));
  EXPECT_TRUE(r.rows.empty());
}

TEST(RulesActions, ZramOnAndNothing) {
  const auto s = captured();
  case_test::Scratch t;
  // zram already on (zram_at_start on, prepared): the swapon step says EALREADY; data, not a failure.
  Trace r = drive(t, "rules", rules_params({rule({{"timer", {{"after_s", 2}}}}, "zram_on")}), s, {5, 25, 0, true});
  ASSERT_EQ(r.of("backend_on").size(), 1u);
  EXPECT_EQ(r.of("backend_on")[0]->detail.at("step").at("errno"), EALREADY);
  EXPECT_EQ(r.outcome.at("backend_on").at("errno"), EALREADY);
  EXPECT_EQ(rule_ticks(r, s), std::vector<std::size_t>{7});
  // nothing: the decision only.
  case_test::Scratch t2;
  r = drive(t2, "rules", rules_params({rule(kTrigger, "nothing")}), s);
  ASSERT_EQ(r.of("rule").size(), 1u);
  EXPECT_EQ(r.of("rule")[0]->detail.at("do"), "nothing");
  EXPECT_TRUE(r.of("backend_on").empty());
  EXPECT_TRUE(r.of("reclaim_start").empty());
  EXPECT_TRUE(r.outcome.at("reclaim").is_null());
  EXPECT_FALSE(r.outcome.contains("backend_on"));
}

// ---- validation ------------------------------------------------------------------------------

TEST(RulesValidation, EachErrorNamesThePart) {
  auto check_rules = [](const json& r) { return test_support::problem_text(harness::case_::rules::check_rules(r)); };
  const json ok = rule(kTrigger, {{"reclaim", {{"mib", 96}}}});
  EXPECT_EQ(check_rules(json::array({ok})), "");
  EXPECT_EQ(check_rules(json::array({ok, rule(kTrigger, "swapon")})),
            "[1].do: 'swapon' is not an action (actions: memory_high, nothing, reclaim, zram_on)");
  EXPECT_EQ(check_rules(json::array({rule("psi_trigger", "nothing")})),
            "[0].when: 'psi_trigger' is not a detector (detectors: mem_available, memory_current, psi, psi_window_trigger, "
            "refaults, timer)");
  // A name near a registered one gets a did-you-mean (issue 59), a short spelling too.
  EXPECT_EQ(check_rules(json::array({rule("psi_windw", "nothing")})),
            "[0].when: 'psi_windw' is not a detector; did you mean 'psi_window_trigger'? (detectors: mem_available, "
            "memory_current, psi, psi_window_trigger, refaults, timer)");
  EXPECT_EQ(check_rules(json::array({rule(kTrigger, "reclam")})),
            "[0].do: 'reclam' is not an action; did you mean 'reclaim'? (actions: memory_high, nothing, reclaim, zram_on)");
  EXPECT_EQ(check_rules(json::array({rule({{"psi", {{"above_pct", "high"}}}}, "nothing")})), "[0].when.psi.above_pct: must be a number");
  EXPECT_EQ(check_rules(json::array({rule({{"psi", {{"above_pct", 150}}}}, "nothing")})),
            "[0].when.psi.above_pct: 150 is above its maximum 100 %");
  EXPECT_EQ(check_rules(json::array({rule({{"psi", {{"kind", "partial"}, {"above_pct", 1}}}}, "nothing")})),
            "[0].when.psi.kind: must be \"some\" or \"full\", not \"partial\"");
  EXPECT_EQ(check_rules(json::array({rule({{"psi", json::object()}}, "nothing")})),
            "[0].when.psi: needs exactly one of above_pct, below_pct (0 given)");
  EXPECT_EQ(check_rules(json::array({rule({{"psi", {{"above", 1}}}}, "nothing")})),
            "[0].when.psi: 'above' is not a parameter of detector psi; did you mean 'above_pct'? (its parameters: kind, "
            "windows, above_pct, below_pct)");  // a short spelling (issue 59's did-you-mean rule)
  EXPECT_EQ(check_rules(json::array({rule(kTrigger, {{"reclaim", {{"mib", 96}, {"fraction", 0.1}}}})})),
            "[0].do.reclaim: needs exactly one of mib, bytes, fraction (2 given)");
  EXPECT_EQ(check_rules(json::array({rule(kTrigger, {{"reclaim", {{"bytes", 1.5}}}})})), "[0].do.reclaim.bytes: must be an integer");
  EXPECT_EQ(check_rules(json::array({rule({{"timer", {{"after_s", 5}, {"before_s", 2}}}}, "nothing")})),
            "[0].when.timer: before_s must be above after_s");
  EXPECT_EQ(check_rules(json::array({rule(kTrigger, "nothing", "twice")})),
            "[0].mode: must be \"once\", {\"every_s\": N} or {\"cooldown_s\": N} (N > 0 seconds)");
  EXPECT_EQ(check_rules(json::array({rule(kTrigger, "nothing", {{"every", 5}})})),
            "[0].mode: 'every' is not a mode; must be \"once\", {\"every_s\": N} or {\"cooldown_s\": N} (N > 0 seconds)");
  EXPECT_EQ(check_rules(json::array({rule(kTrigger, "nothing", {{"cooldown_s", 0}})})),
            "[0].mode.cooldown_s: must be a number of seconds in (0, 86400]");
  EXPECT_EQ(check_rules(json::array({{{"when", kTrigger}}})), "[0]: a rule needs 'do' (an action: memory_high, nothing, reclaim, zram_on)");
  EXPECT_EQ(check_rules(json::array({{{"when", kTrigger}, {"do", "nothing"}, {"if", 1}}})),
            "[0]: 'if' is not a key of a rule (keys: when, do, mode)");
  EXPECT_EQ(check_rules(json::array({{{"when", {{"timer", 3}}}, {"do", "nothing"}}})),
            "[0].when.timer: the parameters of a detector must be a mapping");
  EXPECT_EQ(check_rules(json::array({{{"when", {{"timer", {{"after_s", 1}}}, {"psi", {{"above_pct", 1}}}}}, {"do", "nothing"}}})),
            "[0].when: must be one detector as {\"NAME\": {PARAMS}} or \"NAME\"");
  EXPECT_EQ(check_rules(ok), "must be a list of rules {\"when\": DETECTOR, \"do\": ACTION, \"mode\": MODE}");
}

TEST(RulesValidation, ThroughThePolicyRegistry) {
  const auto* info = harness::case_::find_policy("rules");
  ASSERT_NE(info, nullptr);
  EXPECT_FALSE(info->study_position);
  // Defaults: zram on, no rule (the arm then takes no action).
  const json p = harness::case_::validate_params(*info, {{"rules", json::array({rule(kTrigger, "nothing")})}});
  EXPECT_EQ(p.at("zram_at_start"), "on");
  EXPECT_EQ(harness::case_::validate_params(*info, nullptr), json({{"rules", json::array()}, {"zram_at_start", "on"}}));
  try {
    harness::case_::validate_params(*info, {{"rules", json::array({rule(kTrigger, "swapon")})}});
    ADD_FAILURE() << "accepted";
  } catch (const harness::case_::ParamError& e) {
    EXPECT_EQ(e.field(), "rules[0].do");  // down to the rule's part (the campaign's FILE:LINE:COL)
    EXPECT_STREQ(e.what(), "rules[0].do: 'swapon' is not an action (actions: memory_high, nothing, reclaim, zram_on)");
  }
  try {
    harness::case_::validate_params(*info, {{"rules", json::array()}, {"zram_at_start", "off"}});
    ADD_FAILURE() << "accepted";
  } catch (const harness::case_::ParamError& e) {
    EXPECT_EQ(e.field(), "zram_at_start");
    EXPECT_STREQ(e.what(), "zram_at_start: must be \"on\" or \"prepared\", not \"off\"");
  }
  EXPECT_THROW(harness::case_::validate_params(*info, {{"rules", json::object()}}), harness::case_::ParamError);
  // The blocks' registry: every block documented, parameters named as ParamDefs.
  for (const auto& d : harness::case_::rules::detectors()) EXPECT_FALSE(d.summary.empty()) << d.name;
  for (const auto& a : harness::case_::rules::rule_actions()) EXPECT_FALSE(a.summary.empty()) << a.name;
  EXPECT_NE(harness::case_::policy_catalogue().find("rules"), std::string::npos);
}

TEST(RulesValidation, OneSpellingPerListAndErrorsNamingTheRulesPart) {
  const auto* info = harness::case_::find_policy("rules");
  ASSERT_NE(info, nullptr);
  // The short spellings, the long ones and the defaults written out are one value (one arm SHA-256).
  const json terse = harness::case_::validate_params(
      *info, {{"rules", json::array({rule("psi_window_trigger", "zram_on", nullptr), rule({{"psi", {{"above_pct", 5}}}}, "nothing", {{"every_s", 2}})})}});
  const json spelled = harness::case_::validate_params(
      *info, {{"rules", json::array({rule(kTrigger, {{"zram_on", json::object()}}, "once"),
                                      rule({{"psi", {{"kind", "some"}, {"windows", 1}, {"above_pct", 5}}}}, {{"nothing", nullptr}}, {{"every_s", 2.0}})})},
              {"zram_at_start", "on"}});
  EXPECT_EQ(terse, spelled);
  EXPECT_EQ(terse.at("rules"),
            json::parse(R"([{"do": {"zram_on": {}}, "mode": "once", "when": {"psi_window_trigger": {}}},
                            {"do": {"nothing": {}}, "mode": {"every_s": 2}, "when": {"psi": {"above_pct": 5, "kind": "some", "windows": 1}}}])"));
  // Canonical in, the same out (the guest validates the planned spec again).
  EXPECT_EQ(harness::case_::validate_params(*info, terse), terse);
  // The error's field names the rule's part, for the campaign's FILE:LINE:COL.
  try {
    harness::case_::validate_params(*info, {{"rules", json::array({rule(kTrigger, "nothing"), rule({{"psi", {{"above_pct", 150}}}}, "nothing")})}});
    ADD_FAILURE() << "accepted";
  } catch (const harness::case_::ParamError& e) {
    EXPECT_EQ(e.field(), "rules[1].when.psi.above_pct");
    EXPECT_STREQ(e.what(), "rules[1].when.psi.above_pct: 150 is above its maximum 100 %");
  }
  // Settings: a reclaim above the bg limit, a mode longer than the pressure phase.
  harness::case_::ArmSettings s;
  s.bg_memory_max_mib = 200;
  s.pressure_s = 30;
  const auto problem = [&](const json& list) {
    const auto e = harness::case_::settings_problem(*info, harness::case_::validate_params(*info, {{"rules", list}}), s);
    return e ? e->field() + " | " + e->what() : std::string();
  };
  EXPECT_EQ(problem(json::array({rule(kTrigger, {{"reclaim", {{"mib", 96}}}})})), "");
  EXPECT_EQ(problem(json::array({rule(kTrigger, "nothing"), rule(kTrigger, {{"reclaim", {{"mib", 200}}}})})),
            "rules[1].do.reclaim.mib | rules[1].do.reclaim.mib: 200 MiB must be below cgroups.bg_memory_max_mib (200 MiB): "
            "bg never holds more than its memory.max to reclaim");
  EXPECT_EQ(problem(json::array({rule(kTrigger, {{"reclaim", {{"mib", 199.5}}}})})), "");
  EXPECT_EQ(problem(json::array({rule(kTrigger, {{"reclaim", {{"bytes", 200 * kMiB}}}})})).substr(0, 26),
            "rules[0].do.reclaim.bytes ");
  EXPECT_EQ(problem(json::array({rule(kTrigger, {{"reclaim", {{"bytes", 200 * kMiB - 1}}}})})), "");
  EXPECT_EQ(problem(json::array({rule(kTrigger, {{"reclaim", {{"fraction", 1}}}})})), "");
  EXPECT_EQ(problem(json::array({rule(kTrigger, "nothing", {{"cooldown_s", 30}})})), "");
  EXPECT_EQ(problem(json::array({rule(kTrigger, "nothing", {{"cooldown_s", 30.5}})})),
            "rules[0].mode.cooldown_s | rules[0].mode.cooldown_s: 30.5 s must be at most phases_s.pressure (30 s): no "
            "decision it paces would fall in the pressure phase");
}
