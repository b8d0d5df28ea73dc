#pragma once
// A reclaim policy (harness/case/control/policy.hpp) driven tick by tick through the Controller over
// telemetry captured in a real guest, its writes landing in a fixture root (a scratch copy of
// the 6.1 capture tree: tests/unit/case/case_scratch.hpp), as the executor drives it
// (executor.cpp run_schedule). Shared by the policies' and the rules' unit tests
// (tests/unit/case/policies_test.cpp, rules_test.cpp). The ticks:
//   - bg PSI some/full totals and read times: the 32 recorded reads of
//     tests/unit/case/fixtures/6.1.0-57-cloud-amd64/psi-sequence (idle, a 300 MiB touch loop
//     under memory.max=200M with zram, idle again), on an exact 1 s grid from the first read;
//   - bg memory.current and bg io.pressure some total: the capture tree's bg readings
//     (tests/fixtures/6.1.0-57-cloud-amd64, one reading each, so constant); refaults as the
//     caller says.
// Header-only; include as "tests/common/policy_run.hpp" (links hk_case).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/case/host/backend.hpp"
#include "harness/case/run/bundle.hpp"
#include "harness/case/run/case_outcome.hpp"
#include "harness/case/control/controller.hpp"
#include "harness/case/control/policy.hpp"
#include "harness/case/spec/spec.hpp"
#include "harness/kernel/cgroup.hpp"
#include "harness/kernel/fs.hpp"
#include "harness/kernel/psi.hpp"
#include "tests/common/fixture_file.hpp"

namespace test_support {

/// The recorded PSI reads (NNN.memory.pressure, NNN.uptime).
inline const std::string kPsiSequence = "tests/unit/case/fixtures/6.1.0-57-cloud-amd64/psi-sequence/";
/// The 6.1 capture tree (root/ is the guest's filesystem).
inline const std::string kCaptureTree = "tests/fixtures/6.1.0-57-cloud-amd64/";
/// The case's bg cgroup under a fixture root.
inline const std::string kBgCgroup = "sys/fs/cgroup/harness/bg";

/// bg memory.current of the capture tree, bytes.
inline std::int64_t captured_bg_current() {
  return std::stoll(fixture_text(kCaptureTree + "root/" + kBgCgroup + "/memory.current"));
}

/// bg io.pressure some total of the capture tree, us.
inline std::int64_t captured_bg_io_some_us() {
  const std::string f = kCaptureTree + "root/" + kBgCgroup + "/io.pressure";
  return static_cast<std::int64_t>(harness::kernel::parse_psi(fixture_text(f), f).some_total_us());
}

/// The 32 recorded ticks as samples (phase set by run_policy), with bg workingset refaults
/// (anon) `refault_anon` on every tick and 0 file refaults.
inline std::vector<harness::case_::TelemetrySample> captured_ticks(std::int64_t refault_anon) {
  constexpr std::int64_t kS = 1'000'000'000;
  const std::int64_t current = captured_bg_current(), io_some = captured_bg_io_some_us();
  std::vector<harness::case_::TelemetrySample> out;
  for (int i = 0; i < 32; ++i) {
    const auto base = kPsiSequence + fmt::format("{:03d}", i);
    const auto psi = harness::kernel::parse_psi(fixture_text(base + ".memory.pressure"), base);
    const auto up_ns = static_cast<std::int64_t>(std::llround(std::stod(fixture_text(base + ".uptime")) * 1e9));
    harness::case_::TelemetrySample s;
    s.t_ns = (out.empty() ? up_ns : out.front().t_ns) + i * kS;
    s.read_ns = up_ns;
    s.bg_some_us = static_cast<std::int64_t>(psi.some_total_us());
    s.bg_full_us = static_cast<std::int64_t>(*psi.full_total_us());
    s.bg_current_bytes = current;
    s.bg_io_some_us = io_some;
    s.bg_workingset_refault_anon = refault_anon;
    s.bg_workingset_refault_file = 0;
    out.push_back(s);
  }
  return out;
}

/// The index of the sample at `t_ns` (a test failure and 0 when none is).
inline std::size_t tick_of(const std::vector<harness::case_::TelemetrySample>& s, std::int64_t t_ns) {
  for (std::size_t i = 0; i < s.size(); ++i)
    if (s[i].t_ns == t_ns) return i;
  ADD_FAILURE() << "no tick at " << t_ns;
  return 0;
}

struct PolicyRunOptions {
  int p0 = 5, p1 = 25;           ///< pressure phase: ticks [p0, p1); later ones recovery, earlier warmup
  std::int64_t settle_ns = 0;    ///< reclaim settle (ActionContext::reclaim_settle_ns)
  /// Called on the case's backend before the first tick (e.g. prepare the fixture's zram).
  std::function<void(harness::case_::Backend&)> before_ticks;
};

/// What one run produced.
struct PolicyRun {
  /// events: the ticks' in order, then finish()'s; reclaims: the rows.
  harness::case_::CaseBundle bundle;
  /// outcome.reclaim preset to null (as the executor does), then finish()'s keys; trigger from
  /// the controller's predicate.
  harness::case_::CaseOutcome outcome;
  std::optional<std::string> note;  ///< the policy's no_action_note
  harness::case_::ZramAtStart zram = harness::case_::ZramAtStart::On;
};

/// Runs policy `name` with `params` (validate_params) over `samples` with bg = `root`/kBgCgroup
/// and the study's trigger (1 ms in each of 3 windows): Controller with the policy's hooks
/// (pressure_start_ns = tick p0, pressure_end_ns = tick p1), then finish().
inline PolicyRun run_policy(const std::filesystem::path& root, const harness::case_::BackendSpec& backend_spec,
                            const std::string& name, const nlohmann::json& params,
                            std::vector<harness::case_::TelemetrySample> samples, const PolicyRunOptions& o = {}) {
  using harness::case_::ControllerEvent;
  const auto* info = harness::case_::find_policy(name);
  if (!info) throw std::invalid_argument("no policy " + name);
  auto policy = info->make(harness::case_::validate_params(*info, params));
  harness::kernel::Fs fs(root.string());
  harness::case_::CaseSpec spec;  // the study's trigger
  harness::case_::Backend backend(fs, backend_spec, policy->zram_at_start());
  if (o.before_ticks) o.before_ticks(backend);
  std::vector<harness::case_::TelemetrySample> telemetry;
  harness::case_::ActionContext ctx{spec, backend, harness::kernel::Cgroup(fs, kBgCgroup), telemetry, 4096, o.settle_ns};
  PolicyRun r;
  r.note = policy->no_action_note();
  r.zram = policy->zram_at_start();
  const std::int64_t start = samples.at(static_cast<std::size_t>(o.p0)).t_ns;
  harness::case_::Controller c(
      spec.trigger, start, samples.at(static_cast<std::size_t>(o.p1)).t_ns,
      [&](std::int64_t t_ns, std::vector<ControllerEvent>& ev) { policy->on_trigger(t_ns, ctx, ev); }, r.note,
      [&](const harness::case_::TickInput& tick, std::vector<ControllerEvent>& ev) { policy->on_tick(tick, ctx, ev); });
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const int k = static_cast<int>(i);
    samples[i].phase = k < o.p0 ? "warmup" : k < o.p1 ? "pressure" : "recovery";
    telemetry.push_back(samples[i]);
    c.on_sample(telemetry.back(), r.bundle.events);
  }
  r.outcome.reclaim = harness::case_::ReclaimOutcome{std::nullopt, 4096};
  policy->finish(ctx, r.bundle, r.outcome);
  r.outcome.trigger = harness::case_::trigger_outcome(c.predicate(), !r.note, start);
  return r;
}

}  // namespace test_support
