#pragma once
// A short case spec (harness/case/SPEC.md) for the vm-labelled tests that run `harness case
// run` in a fresh guest: tests/vm/case/{case,zram_ownership}_vm_test.cpp. Built on
// harness::case_::local_guest_case (campaign "vmtest", vm0, the local guest's paths, lzo-rle zram,
// 100 ms canaries, seeds 1) and written by harness::case_::spec_json; fixed here: regime
// fast-structured, 64 MiB/s structured pressure. Include as "tests/common/vm_case_spec.hpp";
// link hk_case.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "harness/case/control/policy.hpp"
#include "harness/case/spec/spec_writer.hpp"

namespace test_support {

/// What differs between the vm tests' cases. Phases in s, sizes in MiB.
struct VmCaseShape {
  int warmup_s = 0, pressure_s = 0, recovery_s = 0;
  long long bg_memory_max_mib = 0;   ///< cgroups.bg_memory_max_bytes
  long long bg_memory_high_mib = 0;  ///< cgroups.bg_memory_high_bytes; 0 = none ("max")
  long long zram_disksize_mib = 0;   ///< backend.zram_disksize_bytes
  long long allocation_mib = 0;      ///< pressure.allocation_bytes
  long long active_set_mib = 0;      ///< pressure.active_set_bytes
};

/// The spec of case `id` in the study arm `configuration` (harness::case_::study_arms(); the
/// one that takes the study's dose gets dose_bytes 96 MiB) with the sizes of `shape`;
/// `triplet_id` "" leaves the key out (it is optional in SPEC.md). Throws
/// std::invalid_argument when `configuration` is not a study arm.
inline nlohmann::json vm_case_spec(const std::string& id, const std::string& configuration, const VmCaseShape& shape,
                                   const std::string& triplet_id = "") {
  constexpr long long kMiB = 1ll << 20;
  const auto* policy = harness::case_::find_policy(configuration);
  if (!policy || !policy->study_position)
    throw std::invalid_argument("vm_case_spec: not a study arm: " + configuration + " (" + harness::case_::study_arm_names() + ")");
  harness::case_::CaseSpec s = harness::case_::local_guest_case(id, "vmtest", configuration);
  s.regime = "fast-structured";
  s.phases = {shape.warmup_s, shape.pressure_s, shape.recovery_s};
  s.cgroups.bg_memory_max_bytes = shape.bg_memory_max_mib * kMiB;
  if (shape.bg_memory_high_mib > 0) s.cgroups.bg_memory_high_bytes = shape.bg_memory_high_mib * kMiB;
  s.backend.zram_disksize_bytes = shape.zram_disksize_mib * kMiB;
  s.pressure.allocation_bytes = shape.allocation_mib * kMiB;
  s.pressure.rate_mib_s = 64;
  s.pressure.active_set_bytes = shape.active_set_mib * kMiB;
  s.pressure.contents = "structured";
  if (!triplet_id.empty()) s.triplet_id = triplet_id;
  const bool takes_dose = std::any_of(policy->params.begin(), policy->params.end(),
                                      [](const harness::case_::ParamDef& d) { return d.name == "dose_mib"; });
  if (takes_dose) {
    s.dose_bytes = 96 * kMiB;
    s.policy_params = {{"dose_mib", 96}};
  }
  return harness::case_::spec_json(s);
}

}  // namespace test_support
