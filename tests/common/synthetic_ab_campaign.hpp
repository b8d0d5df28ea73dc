#pragma once
// A campaign file and a stored A/B DB that belong together: campaigns/ci-regression.yaml reshaped
// to the design of analysis/simulate/synthetic.hpp write_synthetic_ab (2 VMs, 2 regimes, the study's
// three configurations, 3 pairs each), and the synthetic DB whose stored plan is that file's
// text. For the `harness check` tests (--judge, --baseline-db, the judgement in process).
// Header-only; include as "tests/common/synthetic_ab_campaign.hpp" (needs HARNESS_SOURCE_DIR).
#include "analysis/simulate/synthetic.hpp"
#include "tests/common/slurp.hpp"

#include <fstream>
#include <stdexcept>
#include <string>

namespace test_support {

/// The text of the reshaped campaign named `name`, reclaim_duration's tolerance `max_ratio`.
/// Throws std::logic_error when campaigns/ci-regression.yaml no longer holds a line it edits.
inline std::string synthetic_ab_campaign_text(const std::string& name, const std::string& max_ratio) {
  std::string t = slurp(std::string(HARNESS_SOURCE_DIR) + "/campaigns/ci-regression.yaml");
  auto rep = [&](const std::string& a, const std::string& b) {
    const auto at = t.find(a);
    if (at == std::string::npos) throw std::logic_error("campaigns/ci-regression.yaml: no '" + a + "' to replace");
    t.replace(at, a.size(), b);
  };
  rep("name: ci-regression", "name: " + name);
  rep("  count: 1\n", "  count: 2\n");
  rep("  - {name: fast-random, rate_mib_s: 64, contents: random}",
      "  - {name: slow-structured, rate_mib_s: 16, contents: structured}\n"
      "  - {name: fast-random, rate_mib_s: 64, contents: random}");
  rep("configurations: [bounded-reclaim]", "configurations: [static-zram, delayed-activation, bounded-reclaim]");
  rep("  repeats: 6 ", "  repeats: 3 ");
  rep("reclaim_duration: {max_ratio: 1.5}", "reclaim_duration: {max_ratio: " + max_ratio + "}");
  return t;
}

/// Writes synthetic_ab_campaign_text(name, max_ratio) to `path`; returns `path`.
inline std::string write_synthetic_ab_campaign(const std::string& path, const std::string& name,
                                               const std::string& max_ratio) {
  std::ofstream(path) << synthetic_ab_campaign_text(name, max_ratio);
  return path;
}

/// A synthetic A/B DB at `path` (candidate reclaim duration = `reclaim_ratio` x the baseline's)
/// whose cases carry campaign `campaign` and whose stored plan is `campaign_yaml` ("" = the
/// generator's placeholder); returns `path`.
inline std::string write_synthetic_ab_db(const std::string& path, double reclaim_ratio,
                                         const std::string& campaign = "synthetic-ab",
                                         const std::string& campaign_yaml = "") {
  analysis::SyntheticAbOptions o;
  o.reclaim_ratio = reclaim_ratio;
  o.campaign = campaign;
  o.campaign_yaml = campaign_yaml;
  analysis::write_synthetic_ab(path, o);
  return path;
}

}  // namespace test_support
