// One writer of case specs (harness/case/SPEC.md); see spec_writer.hpp.
#include "harness/case/spec/spec_writer.hpp"

#include "harness/json/optional.hpp"
#include "harness/kernel/size.hpp"

namespace harness::case_ {
namespace {

using json = nlohmann::json;
using harness::json::or_null;

json knobs(const std::vector<std::pair<std::string, std::string>>& kv) {
  json o = json::object();
  for (const auto& [k, v] : kv) o[k] = v;
  return o;
}

}  // namespace

nlohmann::json spec_json(const CaseSpec& s) {
  json j = {
      {"case_id", s.case_id},
      {"campaign", s.campaign},
      {"vm", s.vm},
      {"regime", s.regime},
      {"repeat", s.repeat},
      {"configuration", s.configuration},
      {"pinned_commit", s.pinned_commit},
      {"vm_shape", {{"vcpus", s.vm_vcpus}, {"memory_mib", s.vm_memory_mib}}},
      {"phases_s", {{"warmup", s.phases.warmup_s}, {"pressure", s.phases.pressure_s}, {"recovery", s.phases.recovery_s}}},
      {"cgroups",
       {{"parent", s.cgroups.parent},
        {"bg_memory_max_bytes", or_null(s.cgroups.bg_memory_max_bytes)},
        {"bg_memory_high_bytes", or_null(s.cgroups.bg_memory_high_bytes)},
        {"fg_memory_max_bytes", or_null(s.cgroups.fg_memory_max_bytes)},
        {"fg_memory_low_bytes", or_null(s.cgroups.fg_memory_low_bytes)}}},
      {"backend",
       {{"zram_disksize_bytes", s.backend.zram_disksize_bytes},
        {"zram_algorithm", s.backend.zram_algorithm},
        {"zram_priority", s.backend.zram_priority},
        {"swapfile_path", s.backend.swapfile_path},
        {"swapfile_priority", s.backend.swapfile_priority}}},
      {"pressure",
       {{"allocation_bytes", s.pressure.allocation_bytes},
        {"rate_mib_s", s.pressure.rate_mib_s},
        {"active_set_bytes", s.pressure.active_set_bytes},
        {"active_set_slide_mib_s", s.pressure.active_set_slide_mib_s},
        {"contents", s.pressure.contents},
        {"seed", s.pressure.seed}}},
      {"canaries",
       {{"period_ms", s.canaries.period_ms},
        {"compute_hot_bytes", s.canaries.compute_hot_bytes},
        {"sqlite_db_path", s.canaries.sqlite_db_path},
        {"sqlite_queries_per_request", s.canaries.sqlite_queries_per_request},
        {"sqlite_offset_ms", s.canaries.sqlite_offset_ms},
        {"seed", s.canaries.seed}}},
      {"trigger",
       {{"window_ms", s.trigger.window_ms},
        {"min_increase_us", s.trigger.min_increase_us},
        {"consecutive_windows", s.trigger.consecutive_windows}}},
      {"telemetry_period_ms", s.telemetry_period_ms},
      {"telemetry_offset_ms", s.telemetry_offset_ms},
      {"restoration_timeout_s", s.restoration_timeout_s}};
  // Only when not the default: a plan without the key keeps its hash.
  if (s.backend.delayed_swapfile != DelayedSwapfile::Active)
    j["backend"]["delayed_swapfile"] = to_string(s.backend.delayed_swapfile);
  if (s.triplet_id) j["triplet_id"] = *s.triplet_id;
  if (s.dose_bytes) j["dose_bytes"] = *s.dose_bytes;
  // Only for an arm that names its policy: the study's arms are written as before (hash kept).
  if (s.policy_in_spec) j["policy"] = {{"name", s.policy}, {"params", s.policy_params}};
  if (s.variant) {
    const VariantSpec& v = *s.variant;
    j["variant"] = {{"name", v.name},
                    {"pair_id", v.pair_id},
                    {"sysctls", knobs(v.sysctls)},
                    {"sysfs", knobs(v.sysfs)},
                    {"cmdline", v.cmdline},
                    {"kernel_release", or_null(v.kernel_release)},
                    {"kernel_image_dir", or_null(v.kernel_image_dir)}};
  }
  return j;
}

CaseSpec local_guest_case(const std::string& case_id, const std::string& campaign, const std::string& study_arm) {
  using harness::kernel::kMiB;
  CaseSpec s;
  s.case_id = case_id;
  s.campaign = campaign;
  s.vm = "vm0";
  s.repeat = 1;
  s.configuration = study_arm;
  s.policy = study_arm;
  s.pinned_commit = "any";
  s.vm_vcpus = 1;
  s.vm_memory_mib = 1024;
  s.cgroups.parent = "harness";
  s.backend.zram_algorithm = "lzo-rle";
  s.backend.zram_priority = 100;
  s.backend.swapfile_path = "/var/lib/harness/swapfile";
  s.backend.swapfile_priority = 10;
  s.pressure.active_set_slide_mib_s = kDefaultActiveSetSlideMibS;
  s.pressure.seed = 1;
  s.canaries.period_ms = 100;
  s.canaries.compute_hot_bytes = 16 * kMiB;
  s.canaries.sqlite_db_path = "/var/lib/harness/canary.db";
  s.canaries.sqlite_queries_per_request = 8;
  s.canaries.seed = 1;
  return s;
}

}  // namespace harness::case_
