// The campaign sections that become every case's spec (case/SPEC.md): vm, phases_s, cgroups,
// backend, pressure, regimes, canaries, trigger (campaign_yaml_sections.hpp). Rules come
// from the study, docs/PROTOCOL.md and case/SPEC.md.
#include "harness/campaign/model/campaign_yaml_sections.hpp"

#include "harness/case/spec/spec.hpp"

#include <fmt/format.h>

#include <algorithm>
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
  if (auto why = harness::case_::check_cgroup_parent(c.cgroup_parent); !why)
    s.fail(s.node()["parent"] ? s.node()["parent"] : s.node(), s.field("parent"),
           "'" + c.cgroup_parent + "' " + why.error().message);
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
  if (auto why = harness::case_::check_safe_path(c.swapfile_path); !why)
    w.fail(w.node()["path"], w.field("path"), why.error().message);
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

namespace {

/// regimes[i].bg_memory_max_mib: MiB (> 0, < vm.memory_mib), or `none` (no limit).
void read_regime_bg_limit(Section& s, const Campaign& c, Regime& g) {
  const YAML::Node b = s.get("bg_memory_max_mib", true);
  const std::string f = s.field("bg_memory_max_mib");
  g.declared.push_back("bg_memory_max_mib");
  if (b.IsScalar() && b.Scalar() == "none") {
    g.bg_memory_max_mib.reset();
    return;
  }
  if (b.IsNull()) s.fail(b, f, "write `none` for a regime without a bg limit, or a limit in MiB");
  const auto v = s.as<std::int64_t>(b, f);
  if (v <= 0 || v >= c.memory_mib) s.fail(b, f, "must be > 0 and below vm.memory_mib, or none (no limit)");
  g.bg_memory_max_mib = v;
}

/// The pressure regime `g` declares (docs/CAMPAIGN.md "regimes"; each key absent = the
/// campaign's), checked on its own and together: with a bg limit the allocation exceeds it
/// (study); without one (ours) the allocation fits in the VM and the active set leaves part of
/// it cold (else nothing is cold, and no regime without a limit pushes anything out).
void read_regime_pressure(Section& s, const Campaign& c, Regime& g) {
  const YAML::Node& n = s.node();
  g.allocation_mib = c.allocation_mib;
  g.active_set_mib = c.active_set_mib;
  g.bg_memory_max_mib = c.bg_memory_max_mib;
  for (const char* k : {"allocation_mib", "active_set_mib"})
    if (s.has(k)) {
      (std::string(k) == "allocation_mib" ? g.allocation_mib : g.active_set_mib) = positive_int(s, k);
      g.declared.push_back(k);
    }
  if (s.has("active_set_slide_mib_s")) {
    g.active_set_slide_mib_s = s.scalar<double>("active_set_slide_mib_s");
    if (!(g.active_set_slide_mib_s >= 0) || g.active_set_slide_mib_s > 1e5)
      s.fail(n["active_set_slide_mib_s"], s.field("active_set_slide_mib_s"), "must be in 0..100000 MiB/s (0: a stationary hot set)");
    g.declared.push_back("active_set_slide_mib_s");
  }
  if (s.has("bg_memory_max_mib")) read_regime_bg_limit(s, c, g);
  // Point at what the regime wrote (the allocation when it wrote it), else at the regime.
  const auto at = [&](const char* key) { return n[key] ? n[key] : (n["allocation_mib"] ? n["allocation_mib"] : n); };
  if (g.active_set_mib > g.allocation_mib)
    s.fail(at("active_set_mib"), s.field("active_set_mib"),
           fmt::format("{} MiB must be <= allocation_mib ({} MiB)", g.active_set_mib, g.allocation_mib));
  const char* limit_key = n["allocation_mib"] || !n["bg_memory_max_mib"] ? "allocation_mib" : "bg_memory_max_mib";
  if (g.bg_memory_max_mib && g.allocation_mib <= *g.bg_memory_max_mib)
    s.fail(n[limit_key] ? n[limit_key] : n, s.field(limit_key),
           fmt::format("allocation_mib {} MiB must exceed the bg limit ({} MiB, {}) (study: the allocation is larger than the bg limit); "
                       "write bg_memory_max_mib: none for a regime without one",
                       g.allocation_mib, *g.bg_memory_max_mib, bg_limit_field(c, g)));
  if (!g.bg_memory_max_mib && g.allocation_mib >= c.memory_mib)
    s.fail(at("allocation_mib"), s.field("allocation_mib"),
           fmt::format("{} MiB must be below vm.memory_mib ({} MiB): without a bg limit the whole allocation stays resident",
                       g.allocation_mib, c.memory_mib));
  if (!g.bg_memory_max_mib && g.active_set_mib >= g.allocation_mib)
    s.fail(at("active_set_mib"), s.field("active_set_mib"),
           fmt::format("{} MiB must be below allocation_mib ({} MiB): without a bg limit only the memory outside the active "
                       "set is cold, and a proactive policy has nothing else to take",
                       g.active_set_mib, g.allocation_mib));
}

}  // namespace

void read_regimes(Section& top, Campaign& c) {
  YAML::Node r = top.get("regimes", true);
  if (!r.IsSequence() || r.size() == 0) top.fail(r, "regimes", "expected a non-empty list");
  std::set<std::string> names;
  for (std::size_t i = 0; i < r.size(); ++i) {
    Section s(r[i], "regimes[" + std::to_string(i) + "]", top.file());
    Regime g;
    g.line = static_cast<int>(r[i].Mark().line) + 1;
    g.name = s.scalar<std::string>("name");
    check_name(s, r[i]["name"], s.field("name"), g.name, "[a-z0-9-]{1,32}");
    if (!names.insert(g.name).second) s.fail(r[i]["name"], s.field("name"), "duplicate regime '" + g.name + "'");
    g.rate_mib_s = s.scalar<double>("rate_mib_s");
    if (!(g.rate_mib_s > 0)) s.fail(r[i]["rate_mib_s"], s.field("rate_mib_s"), "must be > 0");
    g.contents = s.scalar<std::string>("contents");
    if (g.contents != "structured" && g.contents != "random")
      s.fail(r[i]["contents"], s.field("contents"), "'" + g.contents + "' is not one of structured, random");
    c.regimes.push_back(g);  // bg_limit_field names it by its place
    read_regime_pressure(s, c, c.regimes.back());
    s.finish();
  }
}

nlohmann::json declared_pressure_json(const Regime& g) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& k : g.declared) {
    if (k == "allocation_mib") j[k] = g.allocation_mib;
    else if (k == "active_set_mib") j[k] = g.active_set_mib;
    else if (k == "active_set_slide_mib_s") j[k] = g.active_set_slide_mib_s;
    else if (k == "bg_memory_max_mib") j[k] = g.bg_memory_max_mib ? nlohmann::json(*g.bg_memory_max_mib) : nlohmann::json();
  }
  return j;
}

std::string bg_limit_field(const Campaign& c, const Regime& g) {
  if (std::find(g.declared.begin(), g.declared.end(), "bg_memory_max_mib") == g.declared.end())
    return "cgroups.bg_memory_max_mib";
  for (std::size_t i = 0; i < c.regimes.size(); ++i)
    if (c.regimes[i].name == g.name) return "regimes[" + std::to_string(i) + "].bg_memory_max_mib";
  return "regimes[" + g.name + "].bg_memory_max_mib";
}

void read_canaries(Section& top, Campaign& c) {
  Section s = top.child("canaries");
  c.canary_period_ms = static_cast<int>(positive_int(s, "period_ms", 100));
  c.compute_hot_mib = positive_int(s, "compute_hot_mib", 16);
  c.sqlite_db_path = s.scalar<std::string>("sqlite_db_path", std::string("/var/lib/harness/canary.db"));
  if (auto why = harness::case_::check_safe_path(c.sqlite_db_path); !why)
    s.fail(s.node()["sqlite_db_path"] ? s.node()["sqlite_db_path"] : s.node(), s.field("sqlite_db_path"),
           why.error().message);
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
