#pragma once
// The one did-you-mean rule of the harness (ours): a name nobody knows is answered with the
// known name nearest to it, when one lies within edit distance 2 (Levenshtein), else with a
// known name it is a short spelling of (a prefix within edit distance 2). Used by the strict
// YAML reader for unknown keys (strict_yaml.hpp), by the policy registry for unknown policies
// and parameter names (harness/case/control/policy.hpp unknown_policy, validate_params) and by the rule
// blocks for unknown detectors and actions (rules/blocks.cpp). Header-only and
// free of yaml-cpp, so the guest's programs (which link the case library, never yaml-cpp) use it.
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace harness::yaml {

/// The last row of the Levenshtein table of `a` against `b`: entry j is the edit distance
/// (insertions, deletions, substitutions) between `a` and the first j characters of `b`.
inline std::vector<std::size_t> distance_row(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row;
}

/// Levenshtein distance between `a` and `b` (insertions, deletions, substitutions).
inline std::size_t edit_distance(const std::string& a, const std::string& b) { return distance_row(a, b).back(); }

/// Levenshtein distance between `a` and the nearest prefix of `b`: how far a name typed short
/// is from a known name it begins ("psi_windw" is 1 from "psi_window_trigger").
inline std::size_t prefix_distance(const std::string& a, const std::string& b) {
  const auto row = distance_row(a, b);
  return *std::min_element(row.begin(), row.end());
}

/// The first of `known` nearest to `name` within edit distance 2; failing that, when `name` has
/// at least 4 characters, the first known name one of whose prefixes lies within edit distance
/// 2 of it, nearest first (a name typed short: "psi_windw" -> "psi_window_trigger"); "" when
/// neither is.
template <class Names>
std::string nearest_name(const std::string& name, const Names& known) {
  std::string best;
  std::size_t best_d = 3;  // suggest only within edit distance 2
  for (const auto& k : known) {
    const std::size_t d = edit_distance(name, std::string(k));
    if (d < best_d) best_d = d, best = std::string(k);
  }
  if (!best.empty() || name.size() < 4) return best;
  for (const auto& k : known) {
    const std::size_t d = prefix_distance(name, std::string(k));
    if (d < best_d) best_d = d, best = std::string(k);
  }
  return best;
}

/// " (did you mean 'X'?)" for nearest_name(name, known), or "" when nothing is near.
template <class Names>
std::string did_you_mean(const std::string& name, const Names& known) {
  const std::string n = nearest_name(name, known);
  return n.empty() ? std::string() : " (did you mean '" + n + "'?)";
}

}  // namespace harness::yaml
