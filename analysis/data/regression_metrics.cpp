// The fixed metric list of the A/B regression comparison (see ab_pairs.hpp; ours).
// Kept apart from the comparison itself so that the campaign loader can validate
// regression.tolerances keys without the bootstrap.
#include "analysis/data/ab_pairs.hpp"

namespace analysis {

const std::vector<RegressionMetric>& regression_metrics() {
  static const std::vector<RegressionMetric> k{
      {"reclaim_duration", "s", "memory.reclaim write duration (bounded-reclaim cases)"},
      {"achieved_ratio", "ratio", "achieved / requested of the memory.reclaim write (bounded-reclaim cases)"},
      {"trigger_delay", "s", "trigger (static-zram: would_trigger) time since the pressure-phase start"},
      {"bg_psi_some", "s", "bg memory.pressure some stall during the pressure phase"},
      {"bg_psi_full", "s", "bg memory.pressure full stall during the pressure phase"},
      {"swapout", "KiB", "swap-out (pswpout) during the pressure phase"},
      {"refaults", "count", "bg + fg workingset_refault during the pressure phase"},
      {"compute_p99", "ms", "compute canary pressure-phase p99 response time (type 7)"},
      {"sqlite_p99", "ms", "SQLite canary pressure-phase p99 response time (type 7)"},
      {"restoration_time", "s", "restoration end - start"},
  };
  return k;
}

}  // namespace analysis
