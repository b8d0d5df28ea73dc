#pragma once
// The one did-you-mean rule of the harness (ours): a name nobody knows is answered with the
// known name nearest to it, when one lies within edit distance 2 (Levenshtein). Used by the
// strict YAML reader for unknown keys (strict_yaml.hpp) and by the policy registry for unknown
// parameter names (harness/case/policy.hpp validate_params, rules/blocks.cpp). Header-only and
// free of yaml-cpp, so the guest's programs (which link the case library, never yaml-cpp) use it.
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace harness::yaml {

/// Levenshtein distance between `a` and `b` (insertions, deletions, substitutions).
inline std::size_t edit_distance(const std::string& a, const std::string& b) {
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
  return row[b.size()];
}

/// The first of `known` nearest to `name` within edit distance 2, or "" when none is.
template <class Names>
std::string nearest_name(const std::string& name, const Names& known) {
  std::string best;
  std::size_t best_d = 3;  // suggest only within edit distance 2
  for (const auto& k : known) {
    const std::size_t d = edit_distance(name, std::string(k));
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
