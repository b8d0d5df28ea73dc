#pragma once
// The primary-analysis options of `harness analyze` and `harness compare`: the campaign's
// preregistered settings (analysis/data/campaign_settings.hpp, analysis/tables/primary.hpp
// preregistered_options) overridden by the command line,
// with the exit code of a refusal chosen by who is wrong (exit_codes.hpp). Header-only.
#include "analysis/data/campaign_settings.hpp"
#include "analysis/tables/primary.hpp"
#include "harness/cli/validators.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace harness::cli {

/// Adds the flags that override the preregistered settings: --replicates/-B (an integer in
/// [1, 10^8]) and --seed (an integer >= 0), unset when not given.
inline void add_analysis_flags(CLI::App& sub, std::optional<int>& replicates, std::optional<std::uint64_t>& seed) {
  sub.add_option("--replicates,-B", replicates,
                 "bootstrap replicates B (default: the campaign YAML's analysis.bootstrap_replicates, each "
                 "campaign's own for two, else 10000; below the minimum for alpha and the m comparisons of the declared "
                 "family, 20 m / alpha, is refused)")
      ->check(integer_in(1, 100'000'000));
  sub.add_option("--seed", seed, "bootstrap seed (default: campaign_meta.seed, each campaign's own for two, else 1)")
      ->check(integer_in(0));
}

/// analysis::preregistered_options for the DB at `db_path` (its campaign_meta is `meta`), with
/// `replicates` (--replicates/-B) and `seed` (--seed) when given; warnings are appended to
/// `warnings`. Errors: B below the minimum for alpha and the family's m comparisons is
/// CLI::ValidationError("--replicates", ...) when B came from the command line (exit 64), else
/// std::runtime_error "<db_path>: campaign YAML analysis.bootstrap_replicates ..." (exit 2).
/// Both messages name the minimum B (ours).
inline analysis::PrimaryOptions analysis_options(const std::string& db_path,
                                                 const std::map<std::string, std::string>& meta,
                                                 std::optional<int> replicates, std::optional<std::uint64_t> seed,
                                                 std::vector<std::string>& warnings) {
  try {
    return analysis::preregistered_options(meta, replicates, seed, warnings);
  } catch (const std::invalid_argument& e) {
    if (replicates) throw CLI::ValidationError("--replicates", e.what());  // the command line is wrong: 64
    throw std::runtime_error(db_path + ": " + e.what());                   // the campaign is: 2
  }
}

}  // namespace harness::cli
