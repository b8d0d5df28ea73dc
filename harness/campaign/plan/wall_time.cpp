// Expected wall time of a campaign (see wall_time.hpp).
#include "harness/campaign/plan/wall_time.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace harness::campaign {

std::string human_duration(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  if (s >= 3600) return fmt::format("{} h {} min", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{} min {} s", s / 60, s % 60);
  return fmt::format("{} s", s);
}

namespace {

/// "35.2 s measured on local:ws on 2026-12-05 (median of 7 boots)".
std::string measured_text(const pool::Measured& m, const std::string& host, const char* unit) {
  std::string t = fmt::format("{:.1f} s measured on {} on {}", m.seconds, host, pool::utc_date(m.unix_time));
  if (m.samples > 1) t += fmt::format(" (median of {} {})", m.samples, unit);
  return t;
}

}  // namespace

WallTimeEstimate estimate_wall_time(const Campaign& c, const Schedule& s, bool fresh_boot_per_case,
                                    const std::vector<HostMeasurements>& hosts, const CaseOverhead& o) {
  WallTimeEstimate e;
  e.cases = static_cast<int>(s.cases.size());
  e.phases_s = c.warmup_s + c.pressure_s + c.recovery_s;
  std::map<std::string, const HostMeasurements*> host_of;  // vm -> its host's measurements
  for (const auto& h : hosts)
    for (const auto& g : h.guests) host_of[g] = &h;
  auto boot_of = [&](const std::string& vm) {
    const auto it = host_of.find(vm);
    return it != host_of.end() && it->second->costs.boot.known() ? it->second->costs.boot.seconds : o.fresh_boot_s;
  };
  auto overhead_of = [&](const std::string& vm) {
    return (fresh_boot_per_case ? boot_of(vm) : 0.0) + o.setup_finish_s + o.restoration_s;
  };
  std::map<std::string, int> per_vm;
  for (const auto& k : s.cases) ++per_vm[k.vm];
  std::string busiest;
  double busiest_s = -1, all_s = 0;
  for (const auto& [vm, n] : per_vm) {
    const double t = n * (e.phases_s + overhead_of(vm));
    all_s += t;
    if (t > busiest_s) busiest_s = t, busiest = vm;
  }
  e.guests_at_once = static_cast<int>(per_vm.size());
  // Once per run, host after host: the measured KVM trial and upload.
  std::string once;
  for (const auto& h : hosts) {
    const auto& k = h.costs;
    if (k.kvm_trial.known()) {
      e.once_s += k.kvm_trial.seconds;
      once += fmt::format("{}KVM trial {} (none when its verdict is cached)", once.empty() ? "" : "; ",
                          measured_text(k.kvm_trial, k.host, "trials"));
    }
    if (k.upload.known()) {
      e.once_s += k.upload.seconds;
      once += fmt::format("{}image upload {} (none when the image is there)", once.empty() ? "" : "; ",
                          measured_text(k.upload, k.host, "uploads"));
    }
  }
  const int busiest_n = busiest.empty() ? 0 : per_vm[busiest];
  e.overhead_s = busiest.empty() ? overhead_of("") : overhead_of(busiest);
  e.wall_s = e.once_s + std::max(0.0, busiest_s);
  e.guest_hours = all_s / 3600.0;
  std::string parts;
  if (fresh_boot_per_case) {
    const auto it = host_of.find(busiest);
    const bool known = it != host_of.end() && it->second->costs.boot.known();
    parts = fmt::format("a boot per case {:.1f} s ({}) + ", boot_of(busiest),
                        known ? measured_text(it->second->costs.boot, it->second->costs.host, "boots")
                              : fmt::format("assumed {:g} s, not yet measured", o.fresh_boot_s));
  }
  parts += fmt::format("setup and finish {:g} s + restoration {:g} s, measured on a 2-core TCG machine, docs/DESIGN.md "
                       "\"Command 1 end to end\"",
                       o.setup_finish_s, o.restoration_s);
  e.text = fmt::format(
      "expected wall time: {} with {} guest(s) running at once (the busiest runs {} case(s) of {:g} s of phases + "
      "{:.1f} s overhead: {}){}; {} case(s), {:.1f} guest-hours",
      human_duration(e.wall_s), e.guests_at_once, busiest_n, e.phases_s, e.overhead_s, parts,
      once.empty() ? "" : fmt::format(", after {} once per run: {}", human_duration(e.once_s), once), e.cases,
      e.guest_hours);
  // Every other host's boot, when some host has one measured.
  if (fresh_boot_per_case &&
      std::any_of(hosts.begin(), hosts.end(), [](const HostMeasurements& h) { return h.costs.boot.known(); }))
    for (const auto& h : hosts) {
      if (h.guests.empty() || std::find(h.guests.begin(), h.guests.end(), busiest) != h.guests.end()) continue;
      e.text += fmt::format("\n  boots on {}: {}", h.costs.host,
                            h.costs.boot.known() ? measured_text(h.costs.boot, h.costs.host, "boots")
                                                 : fmt::format("assumed {:g} s, not yet measured", o.fresh_boot_s));
    }
  return e;
}

}  // namespace harness::campaign
