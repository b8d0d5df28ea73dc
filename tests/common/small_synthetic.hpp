#pragma once
// The small synthetic campaign (analysis/simulate/synthetic.hpp) shared by the analysis, report,
// compare and Python-module tests. Header-only; include as "tests/common/small_synthetic.hpp".
#include "analysis/simulate/synthetic.hpp"

#include <cmath>
#include <string>

namespace test_support {

/// 2 VMs x 4 regimes x 2 triplets (48 cases), phases 2/5/2 s, every case on `accelerator`
/// ("tcg" adds the report's TCG warnings; "kvm" is SyntheticOptions' default); tests adjust
/// the other fields.
inline analysis::SyntheticOptions small_synthetic(const std::string& accelerator = "tcg") {
  return analysis::SyntheticOptions{
      .vms = 2, .triplets_per_stratum = 2, .warmup_s = 2, .pressure_s = 5, .recovery_s = 2, .accelerator = accelerator};
}

/// A k-arm campaign (k = 5) on small_synthetic's shape (80 cases): the study's three, `senpai`
/// (policy senpai, behaving like static zram, p99 x0.9 compute / x1.1 sqlite) and `bounded-loop`
/// (policy bounded-loop, writing memory.reclaim like bounded reclaim, p99 x0.97 / x0.95), the
/// `arms` table written, and a declared family of five comparisons in the plan JSON (both
/// spellings, one study comparison among them; senpai and bounded-loop each in some).
inline analysis::SyntheticOptions five_arm_synthetic(const std::string& accelerator = "kvm") {
  analysis::SyntheticOptions o = small_synthetic(accelerator);
  o.extra_arms = {{"senpai", "senpai", R"({"interval_s":6})", {std::log(0.9), std::log(1.1)}, 0},
                  {"bounded-loop", "bounded-loop", R"({"step_mib":32,"total_cap_mib":96})", {std::log(0.97), std::log(0.95)}, 2}};
  o.comparisons = {"compute:senpai/static-zram", "sqlite:senpai/static-zram", "compute:bounded-loop/bounded-reclaim",
                   "sqlite:static-zram", "compute:delayed-activation/senpai"};
  o.write_arms = true;
  return o;
}

}  // namespace test_support
