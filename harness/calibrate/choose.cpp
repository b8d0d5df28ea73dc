// Calibration rule and table (see choose.hpp).
#include "harness/calibrate/choose.hpp"

#include "harness/text/join.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace harness::calibrate {

std::optional<double> max_rel_error(const Measured& m, const Target& t) {
  if (!m.swapout_kib_300 || !m.refault_anon_bg_300) return std::nullopt;
  return std::max(std::fabs(*m.swapout_kib_300 / t.swapout_kib - 1.0), std::fabs(*m.refault_anon_bg_300 / t.refaults - 1.0));
}

std::optional<std::size_t> choose(const std::vector<Measured>& ms, const Target& t) {
  std::optional<std::size_t> best;
  std::optional<double> best_err;
  for (std::size_t i = 0; i < ms.size(); ++i) {
    auto e = max_rel_error(ms[i], t);
    if (e && (!best_err || *e < *best_err)) best = i, best_err = e;
  }
  return best;
}

namespace {
std::string f(const std::optional<double>& v, const char* fmt_str = "{:.0f}") {
  return v ? fmt::format(fmt::runtime(fmt_str), *v) : std::string("n/a");
}

/// What the stall columns' headings say about the accelerator the points ran under.
std::string stall_label(const std::vector<Measured>& ms) {
  std::vector<std::string> seen;
  for (const auto& m : ms)
    if (!m.accelerator.empty() && std::find(seen.begin(), seen.end(), m.accelerator) == seen.end())
      seen.push_back(m.accelerator);
  if (std::find(seen.begin(), seen.end(), "tcg") != seen.end()) return "TCG-inflated";
  if (seen.empty()) return "accelerator not recorded";
  return text::join(seen, ", ", [](const std::string& a) { return a == "kvm" ? std::string("KVM") : a; });
}
}  // namespace

std::string table(const std::vector<Point>& points, const std::vector<Measured>& ms, const Target& t) {
  const std::string label = stall_label(ms);
  std::string out = fmt::format(
      "| point (alloc/active/slide/bg max) | P (s) | swap-out KiB | refaults bg anon | swap-out KiB @300 s | "
      "refaults @300 s | refaults all | bg some s ({0}) | bg full s ({0}) | episode s | "
      "episode fraction | alloc MiB/s | max rel err |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
      label);
  out += fmt::format("| study static-zram median | 300 | {:.0f} | {:.0f} | {:.0f} | {:.0f} | - | {:.3f} | {:.3f} | - | - | - | - |\n",
                     t.swapout_kib, t.refaults, t.swapout_kib, t.refaults, t.some_s, t.full_s);
  const auto best = choose(ms, t);
  for (std::size_t i = 0; i < ms.size() && i < points.size(); ++i) {
    const auto& p = points[i];
    const auto& m = ms[i];
    out += fmt::format("| {}{} MiB / {} MiB / {} MiB/s / {} MiB | {:.0f} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                       best && *best == i ? "**chosen** " : "", p.allocation_mib, p.active_set_mib, p.slide_mib_s,
                       p.bg_max_mib, m.pressure_s, f(m.swapout_kib), f(m.refault_anon_bg), f(m.swapout_kib_300),
                       f(m.refault_anon_bg_300), f(m.refault_all), f(m.bg_some_s, "{:.3f}"), f(m.bg_full_s, "{:.3f}"),
                       f(m.episode_s, "{:.0f}"), f(m.episode_fraction, "{:.2f}"), f(m.achieved_rate_mib_s, "{:.1f}"),
                       f(max_rel_error(m, t), "{:.3f}"));
  }
  out += "\nRule: minimum over points of max(|swap-out/99,198 KiB - 1|, |refaults/34,104 - 1|), both projected to a "
         "300 s pressure phase (value + second-half rate x (300 s - P)); refaults = bg workingset_refault_anon delta; "
         "swap-out = /proc/vmstat pswpout delta x page size. Stall times are inflated under TCG and are not in the rule.\n";
  return out;
}

}  // namespace harness::calibrate
