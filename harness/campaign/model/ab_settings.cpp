// Comparison settings digest of an A/B campaign (see ab_settings.hpp).
#include "harness/campaign/model/ab_settings.hpp"

#include "harness/digest/sha256.hpp"
#include "harness/json/leaf_paths.hpp"
#include "harness/json/optional.hpp"

#include <algorithm>
#include <map>

namespace harness::campaign {
namespace {

using harness::json::or_null;

nlohmann::json variant_json(const Variant& v) {
  nlohmann::json sysctls = nlohmann::json::object(), sysfs = nlohmann::json::object();
  for (const auto& [k, x] : v.sysctls) sysctls[k] = x;
  for (const auto& [k, x] : v.sysfs) sysfs[k] = x;
  nlohmann::json j = {{"sysctls", sysctls}, {"sysfs", sysfs}, {"cmdline", v.cmdline},
                      {"kernel", {{"image_dir", v.kernel_image_dir}}}};
  if (!v.kernel_release.empty()) j["kernel"]["release"] = v.kernel_release;  // filled at plan time
  return j;
}

/// provider.*: the kind and what the engine parsed (engine.hpp EngineConfig::settings);
/// `overcommit` only when true, so campaigns without it keep their digest.
nlohmann::json provider_settings(const Campaign& c) {
  nlohmann::json p = c.engine ? c.engine->settings() : nlohmann::json::object();
  p["kind"] = c.provider;
  p["vms"] = c.vms;  // design order (design.vms may reorder the provider's)
  if (c.engine && c.engine->overcommit) p["overcommit"] = true;
  return p;
}

}  // namespace

nlohmann::json comparison_settings(const Campaign& c) {
  nlohmann::json regimes = nlohmann::json::array();
  for (const auto& g : c.regimes) {
    nlohmann::json r = {{"name", g.name}, {"rate_mib_s", g.rate_mib_s}, {"contents", g.contents}};
    // Only the pressure a regime declares (campaign.hpp Regime): campaigns without keep their digest.
    if (const auto p = declared_pressure_json(g); !p.empty()) r.update(p);
    regimes.push_back(r);
  }
  nlohmann::json design = {{"kind", c.design},
                           {"vms", c.vms},
                           {"repeats", c.repeats},
                           {"triplets_per_regime", c.triplets_per_regime},
                           {"dose_mib", c.dose_from_pilot.empty() ? or_null(c.dose_mib)
                                                                  : nlohmann::json{{"from_pilot", c.dose_from_pilot}}},
                           {"doses_mib", c.pilot_doses_mib}};
  // Only when declared: campaigns without it keep their digest.
  if (!c.dose_accept_differences.empty()) design["dose_mib"]["accept_differences"] = c.dose_accept_differences;
  nlohmann::json j = {
      {"kind", c.kind},
      {"seed", c.seed},
      {"pinned_commit", c.pinned_commit},
      {"vm", {{"vcpus", c.vcpus}, {"memory_mib", c.memory_mib}}},
      {"provider", provider_settings(c)},
      {"phases_s", {{"warmup", c.warmup_s}, {"pressure", c.pressure_s}, {"recovery", c.recovery_s}}},
      {"cgroups",
       {{"parent", c.cgroup_parent},
        {"bg_memory_max_mib", c.bg_memory_max_mib},
        {"bg_memory_high_mib", or_null(c.bg_memory_high_mib)},
        {"fg_memory_max_mib", or_null(c.fg_memory_max_mib)},
        {"fg_memory_low_mib", or_null(c.fg_memory_low_mib)}}},
      {"backend",
       {{"zram", {{"disksize_mib", c.zram_disksize_mib}, {"algorithm", c.zram_algorithm}, {"priority", c.zram_priority}}},
        {"swapfile", {{"path", c.swapfile_path}, {"priority", c.swapfile_priority}}},
        {"delayed_swapfile", harness::case_::to_string(c.delayed_swapfile)}}},
      {"pressure", {{"allocation_mib", c.allocation_mib}, {"active_set_mib", c.active_set_mib}}},
      {"regimes", regimes},
      {"canaries",
       {{"period_ms", c.canary_period_ms},
        {"compute_hot_mib", c.compute_hot_mib},
        {"sqlite_db_path", c.sqlite_db_path},
        {"sqlite_queries_per_request", c.sqlite_queries_per_request}}},
      {"trigger",
       {{"window_ms", c.trigger_window_ms},
        {"min_increase_us", c.trigger_min_increase_us},
        {"consecutive_windows", c.trigger_consecutive_windows}}},
      {"telemetry_period_ms", c.telemetry_period_ms},
      {"restoration_timeout_s", c.restoration_timeout_s},
      {"configurations", arm_names(c)},
      {"design", design},
      {"analysis", {{"bootstrap_replicates", c.bootstrap_replicates}, {"alpha", c.alpha}, {"comparisons", c.comparisons}}},
      {"eligibility", c.eligibility_json()},
  };
  // variants.baseline only: the candidate is what the comparison is about.
  for (const auto& v : c.variants)
    if (v.name == "baseline") j["variants"]["baseline"] = variant_json(v);
  return j;
}

std::string settings_digest(const nlohmann::json& settings) { return harness::digest::sha256_hex(settings.dump()); }

std::string comparison_settings_sha256(const Campaign& c) { return settings_digest(comparison_settings(c)); }

std::vector<SettingDifference> differing_settings(const nlohmann::json& ours, const nlohmann::json& theirs) {
  const auto a = harness::json::leaf_paths(ours), b = harness::json::leaf_paths(theirs);
  std::vector<SettingDifference> out;
  for (const auto& [path, v] : a) {
    const auto it = b.find(path);
    if (it == b.end()) out.push_back({path, v.dump(), "(absent)"});
    else if (it->second != v) out.push_back({path, v.dump(), it->second.dump()});
  }
  for (const auto& [path, v] : b)
    if (!a.count(path)) out.push_back({path, "(absent)", v.dump()});
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.path < y.path; });
  return out;
}

}  // namespace harness::campaign
