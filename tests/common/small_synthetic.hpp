#pragma once
// The small synthetic campaign (analysis/synthetic.hpp) shared by the analysis, report,
// compare and Python-module tests. Header-only; include as "tests/common/small_synthetic.hpp".
#include "analysis/synthetic.hpp"

#include <string>

namespace test_support {

/// 2 VMs x 4 regimes x 2 triplets (48 cases), phases 2/5/2 s, every case on `accelerator`
/// ("tcg" adds the report's TCG warnings; "kvm" is SyntheticOptions' default); tests adjust
/// the other fields.
inline analysis::SyntheticOptions small_synthetic(const std::string& accelerator = "tcg") {
  return analysis::SyntheticOptions{
      .vms = 2, .triplets_per_stratum = 2, .warmup_s = 2, .pressure_s = 5, .recovery_s = 2, .accelerator = accelerator};
}

}  // namespace test_support
