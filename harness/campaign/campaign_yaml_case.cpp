// The campaign sections that become every case's spec (case/SPEC.md): vm, phases_s, cgroups,
// backend, pressure, regimes, canaries, trigger (campaign_yaml_sections.hpp). Rules come
// from the study, docs/PROTOCOL.md and case/SPEC.md.
#include "harness/campaign/campaign_yaml_sections.hpp"

#include "harness/case/spec.hpp"

#include <set>

namespace harness::campaign {

using yaml::Section;
using yaml::check_name;
using yaml::positive_int;

void read_vm_shape(Section& top, Campaign& c) {
  Section s = top.child("vm");
  c.vcpus = static_cast<int>(positive_int(s, "vcpus", 1));
  c.memory_mib = static_cast<int>(positive_int(s, "memory_mib", 1024));
  s.finish();
}

void read_phases(Section& top, Campaign& c) {
  Section s = top.child("phases_s");
  c.warmup_s = static_cast<int>(positive_int(s, "warmup"));
  c.pressure_s = static_cast<int>(positive_int(s, "pressure"));
  c.recovery_s = static_cast<int>(positive_int(s, "recovery"));
  s.finish();
}

void read_cgroups(Section& top, Campaign& c) {
  Section s = top.child("cgroups");
  c.cgroup_parent = s.scalar<std::string>("parent", std::string("harness"));
  if (auto why = harness::case_::cgroup_parent_problem(c.cgroup_parent))
    s.fail(s.node()["parent"] ? s.node()["parent"] : s.node(), s.field("parent"), "'" + c.cgroup_parent + "' " + *why);
  c.bg_memory_max_mib = positive_int(s, "bg_memory_max_mib");
  c.bg_memory_high_mib = s.optional_scalar<std::int64_t>("bg_memory_high_mib");
  c.fg_memory_max_mib = s.optional_scalar<std::int64_t>("fg_memory_max_mib");
  c.fg_memory_low_mib = s.optional_scalar<std::int64_t>("fg_memory_low_mib");
  if (c.bg_memory_max_mib >= c.memory_mib)
    s.fail(s.node()["bg_memory_max_mib"], s.field("bg_memory_max_mib"), "must be below vm.memory_mib");
  s.finish();
}

namespace {

/// backend.zram: {disksize_mib, algorithm (one the 6.1 cloud kernel has), priority}.
void read_zram(Section& backend, Campaign& c) {
  Section z = backend.child("zram");
  c.zram_disksize_mib = positive_int(z, "disksize_mib");
  c.zram_algorithm = z.scalar<std::string>("algorithm");
  static const std::set<std::string> algos{"lzo", "lzo-rle", "lz4", "lz4hc", "zstd"};
  if (!algos.count(c.zram_algorithm))
    z.fail(z.node()["algorithm"], z.field("algorithm"),
           "'" + c.zram_algorithm + "' is not one of lzo, lzo-rle, lz4, lz4hc, zstd (6.1 cloud kernel)");
  c.zram_priority = z.scalar<int>("priority");
  z.finish();
}

/// backend.swapfile: {path (a safe absolute path), priority}.
void read_swapfile(Section& backend, Campaign& c) {
  Section w = backend.child("swapfile");
  c.swapfile_path = w.scalar<std::string>("path");
  if (auto why = harness::case_::unsafe_path_reason(c.swapfile_path)) w.fail(w.node()["path"], w.field("path"), *why);
  c.swapfile_priority = w.scalar<int>("priority");
  w.finish();
}

}  // namespace

void read_backend(Section& top, Campaign& c) {
  Section s = top.child("backend");
  read_zram(s, c);
  read_swapfile(s, c);
  if (auto v = s.optional_scalar<std::string>("delayed_swapfile")) {
    if (*v == "off") c.delayed_swapfile = harness::case_::DelayedSwapfile::Off;
    else if (*v != "active")
      s.fail(s.node()["delayed_swapfile"], s.field("delayed_swapfile"),
             "'" + *v + "' is not one of active, off (the swapfile in delayed-activation before the trigger)");
  }
  if (c.swapfile_priority >= c.zram_priority)
    s.fail(s.node(), s.field("swapfile.priority"),
           "must be below zram.priority (the swapfile is the low-priority spill device, campaigns/README.md)");
  s.finish();
}

void read_pressure(Section& top, Campaign& c) {
  Section s = top.child("pressure");
  c.allocation_mib = positive_int(s, "allocation_mib");
  c.active_set_mib = positive_int(s, "active_set_mib");
  if (c.allocation_mib <= c.bg_memory_max_mib)
    s.fail(s.node()["allocation_mib"], s.field("allocation_mib"),
           "must exceed cgroups.bg_memory_max_mib (study: the allocation is larger than the bg limit)");
  if (c.active_set_mib > c.allocation_mib)
    s.fail(s.node()["active_set_mib"], s.field("active_set_mib"), "must be <= allocation_mib");
  s.finish();
}

void read_regimes(Section& top, Campaign& c) {
  YAML::Node r = top.get("regimes", true);
  if (!r.IsSequence() || r.size() == 0) top.fail(r, "regimes", "expected a non-empty list");
  std::set<std::string> names;
  for (std::size_t i = 0; i < r.size(); ++i) {
    Section s(r[i], "regimes[" + std::to_string(i) + "]", top.file());
    Regime g;
    g.name = s.scalar<std::string>("name");
    check_name(s, r[i]["name"], s.field("name"), g.name, "[a-z0-9-]{1,32}");
    if (!names.insert(g.name).second) s.fail(r[i]["name"], s.field("name"), "duplicate regime '" + g.name + "'");
    g.rate_mib_s = s.scalar<double>("rate_mib_s");
    if (!(g.rate_mib_s > 0)) s.fail(r[i]["rate_mib_s"], s.field("rate_mib_s"), "must be > 0");
    g.contents = s.scalar<std::string>("contents");
    if (g.contents != "structured" && g.contents != "random")
      s.fail(r[i]["contents"], s.field("contents"), "'" + g.contents + "' is not one of structured, random");
    s.finish();
    c.regimes.push_back(g);
  }
}

void read_canaries(Section& top, Campaign& c) {
  Section s = top.child("canaries");
  c.canary_period_ms = static_cast<int>(positive_int(s, "period_ms", 100));
  c.compute_hot_mib = positive_int(s, "compute_hot_mib", 16);
  c.sqlite_db_path = s.scalar<std::string>("sqlite_db_path", std::string("/var/lib/harness/canary.db"));
  if (auto why = harness::case_::unsafe_path_reason(c.sqlite_db_path))
    s.fail(s.node()["sqlite_db_path"] ? s.node()["sqlite_db_path"] : s.node(), s.field("sqlite_db_path"), *why);
  c.sqlite_queries_per_request = static_cast<int>(positive_int(s, "sqlite_queries_per_request", 8));
  s.finish();
}

void read_trigger(Section& top, Campaign& c) {
  Section s = top.child("trigger");
  c.trigger_window_ms = static_cast<int>(positive_int(s, "window_ms", 1000));
  c.trigger_min_increase_us = positive_int(s, "min_increase_us", 1000);
  c.trigger_consecutive_windows = static_cast<int>(positive_int(s, "consecutive_windows", 3));
  s.finish();
}

}  // namespace harness::campaign
