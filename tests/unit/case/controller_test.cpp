// Controller: predicate armed for the pressure phase only, one action, events recorded.
// PSI totals are the recorded guest sequence (fixtures/6.1.0-57-cloud-amd64/psi-sequence).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>

#include "harness/case/control/controller.hpp"
#include "harness/case/control/policy.hpp"
#include "harness/kernel/psi.hpp"
#include "tests/common/slurp.hpp"

using harness::case_::ControllerEvent;
using harness::case_::TelemetrySample;

namespace {
std::vector<std::int64_t> recorded_totals() {
  std::vector<std::int64_t> out;
  for (int i = 0; i < 32; ++i) {
    auto p = fmt::format("tests/unit/case/fixtures/6.1.0-57-cloud-amd64/psi-sequence/{:03d}.memory.pressure", i);
    out.push_back(static_cast<std::int64_t>(harness::kernel::parse_psi(test_support::slurp(p), p).some_total_us()));
  }
  return out;
}

/// Ticks 1 s apart from t=0; pressure phase = [5 s, 25 s].
struct Run {
  std::vector<ControllerEvent> events;
  int actions = 0;
  std::int64_t action_t = -1;
};

/// `arm`: a registered policy, with `params` (validated, defaults filled).
Run drive(const std::string& arm, const nlohmann::json& params, const std::vector<std::optional<std::int64_t>>& totals) {
  Run r;
  const std::int64_t s = 1'000'000'000;
  // The policy's own response (policies/): static-zram has a no-action note.
  const auto* info = harness::case_::find_policy(arm);
  if (!info) throw std::invalid_argument("no policy " + arm);
  const auto action = info->make(harness::case_::validate_params(*info, params));
  harness::case_::Controller c(
      {}, 5 * s, 25 * s,
      [&](std::int64_t t, std::vector<ControllerEvent>& ev) {
        ++r.actions;
        r.action_t = t;
        ev.push_back({t, "backend_on", {}, {}, {}, {}, nullptr});
      },
      action->no_action_note());
  for (std::size_t i = 0; i < totals.size(); ++i) {
    TelemetrySample x;
    x.t_ns = static_cast<std::int64_t>(i) * s;
    x.phase = i < 5 ? "warmup" : i < 25 ? "pressure" : "recovery";
    x.bg_some_us = totals[i];
    c.on_sample(x, r.events);
  }
  return r;
}

std::vector<std::optional<std::int64_t>> opt(const std::vector<std::int64_t>& v) { return {v.begin(), v.end()}; }
}  // namespace

TEST(Controller, OnlyPressureWindowsAreEvaluatedAndTheActionRunsOnce) {
  // Shift the recorded sequence so that pressure already grows during "warmup" (ticks 0-4
  // use recorded ticks 7-11): warmup windows must not count towards the trigger.
  auto rec = recorded_totals();
  std::vector<std::int64_t> v(rec.begin() + 7, rec.end());
  auto r = drive("delayed-activation", {}, opt(v));
  int windows = 0;
  for (const auto& e : r.events) windows += e.kind == "window";
  EXPECT_EQ(windows, 19);  // windows closing at ticks 6..24 (25 samples)
  EXPECT_EQ(r.events.front().t_ns, 6'000'000'000);
  EXPECT_EQ(r.actions, 1);
  EXPECT_EQ(r.action_t, 8'000'000'000);  // third counting window after the baseline at 5 s
  int triggers = 0;
  for (const auto& e : r.events) triggers += e.kind == "trigger";
  EXPECT_EQ(triggers, 1);
}

TEST(Controller, StaticZramRecordsTheWouldBeFiringTimeWithoutAction) {
  auto rec = recorded_totals();
  // Ticks 0-4 idle, the recorded episode from tick 5 (recorded ticks 3..).
  std::vector<std::int64_t> v(rec.begin() + 1, rec.end());
  auto r = drive("static-zram", {}, opt(v));
  EXPECT_EQ(r.actions, 0);
  int would = 0;
  std::int64_t t = -1;
  for (const auto& e : r.events)
    if (e.kind == "would_trigger") {
      ++would, t = e.t_ns;
      EXPECT_EQ(e.detail["note"], "static-zram: no action; would-be firing time recorded");
    }
  EXPECT_EQ(would, 1);
  // v[i] = rec[i+1]; pressure grows from rec[7] = v[6]: windows at 6,7,8 count -> fires at 8 s.
  EXPECT_EQ(t, 8'000'000'000);
  for (const auto& e : r.events) EXPECT_NE(e.kind, "trigger");
}

TEST(Controller, UnreadablePsiIsAnErrorEventAndResetsTheRun) {
  auto rec = recorded_totals();
  std::vector<std::optional<std::int64_t>> v(rec.begin() + 1, rec.end());
  v[7] = std::nullopt;  // tick 7 unreadable: windows at 6 counted once, then reset
  auto r = drive("bounded-reclaim", {{"dose_mib", 96}}, v);
  int errors = 0;
  for (const auto& e : r.events) errors += e.kind == "error";
  EXPECT_EQ(errors, 1);
  EXPECT_EQ(r.actions, 1);
  // Baseline again at tick 8; counting windows at 9, 10, 11 -> fires at 11 s.
  EXPECT_EQ(r.action_t, 11'000'000'000);
}

TEST(Controller, NoPressureNoTrigger) {
  auto rec = recorded_totals();
  std::vector<std::int64_t> flat(30, rec.back());  // the recorded idle tail
  auto r = drive("bounded-reclaim", {{"dose_mib", 96}}, opt(flat));
  EXPECT_EQ(r.actions, 0);
  // The loop below says nothing over no events: the pressure phase [5 s, 25 s] must have
  // been evaluated window by window (20 windows: ticks 6..25, each against the previous).
  ASSERT_EQ(r.events.size(), 20u);
  for (const auto& e : r.events) {
    EXPECT_EQ(e.kind, "window");
    EXPECT_EQ(*e.counting, 0);
    EXPECT_EQ(*e.delta_us, 0);
  }
}
