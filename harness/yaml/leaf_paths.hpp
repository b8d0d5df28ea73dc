#pragma once
// The leaves of a YAML document under dotted paths, in document order, each as the node the
// document holds (so its text stays as written: `rate_mib_s: 064` is "064", not 64).
// The rules are harness/json/leaf_paths.hpp's. Header-only.
#include "harness/json/leaf_paths.hpp"

#include <yaml-cpp/yaml.h>

#include <string>
#include <utility>
#include <vector>

namespace harness::yaml {

/// How visit_leaf_paths reads a YAML node: maps are mappings, sequences lists; a key that is
/// not a scalar (the strict reader refuses those) is named by its flow text.
struct YamlTree {
  static bool is_map(const YAML::Node& n) { return n.IsMap(); }
  static bool is_list(const YAML::Node& n) { return n.IsSequence(); }
  static std::size_t size(const YAML::Node& n) { return n.size(); }
  static YAML::Node at(const YAML::Node& n, std::size_t i) { return n[i]; }
  template <class F>
  static void each_entry(const YAML::Node& n, const F& f) {
    for (const auto& kv : n) {
      YAML::Emitter key;
      if (!kv.first.IsScalar()) key << YAML::Flow << kv.first;
      f(kv.first.IsScalar() ? kv.first.Scalar() : std::string(key.c_str()), YAML::Node(kv.second));
    }
  }
};

/// Every leaf of `n` with its dotted path, in document order.
inline std::vector<std::pair<std::string, YAML::Node>> leaf_paths(const YAML::Node& n) {
  std::vector<std::pair<std::string, YAML::Node>> out;
  harness::json::visit_leaf_paths<YamlTree>(n, "", [&](const std::string& path, const YAML::Node& v) {
    out.emplace_back(path, v);
  });
  return out;
}

}  // namespace harness::yaml
