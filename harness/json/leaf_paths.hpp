#pragma once
// The leaves of a tree under dotted paths ("cgroups.bg_memory_max_mib", "regimes[1].name"):
// how the A/B check lists the comparison settings that differ (harness/campaign/model/ab_settings.cpp)
// and how `harness compare` lists the settings a DB's campaign YAML records
// (analysis/compare/recorded_settings.cpp, through harness/yaml/leaf_paths.hpp). Header-only.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <map>
#include <string>

namespace harness::json {

/// Calls `leaf(path, node)` for every leaf under `n` in the tree's own order. Rules (ours):
/// a mapping recurses by key (`path.key`, or `key` at the top; an empty mapping has no
/// leaf, so `sysctls: {}` against `sysctls: {vm.swappiness: 10}` differs in the one path
/// `sysctls.vm.swappiness`); a list holding a mapping recurses by index (`path[i]`); any other
/// list and every scalar is one leaf. `Tree` reads a node: static bool is_map(const Node&),
/// static bool is_list(const Node&), static std::size_t size(const Node&), static Node
/// at(const Node&, std::size_t) (list element), and static void each_entry(const Node&, F)
/// calling F(const std::string& key, const Node& value) for each entry of a mapping in order.
template <class Tree, class Node, class Leaf>
void visit_leaf_paths(const Node& n, const std::string& path, const Leaf& leaf) {
  if (Tree::is_map(n)) {
    Tree::each_entry(n, [&](const std::string& key, const Node& value) {
      visit_leaf_paths<Tree>(value, path.empty() ? key : path + "." + key, leaf);
    });
    return;
  }
  bool holds_map = false;
  if (Tree::is_list(n))
    for (std::size_t i = 0; i < Tree::size(n) && !holds_map; ++i) holds_map = Tree::is_map(Tree::at(n, i));
  if (holds_map) {
    for (std::size_t i = 0; i < Tree::size(n); ++i)
      visit_leaf_paths<Tree>(Tree::at(n, i), path + "[" + std::to_string(i) + "]", leaf);
    return;
  }
  leaf(path, n);
}

/// How visit_leaf_paths reads a JSON value: objects are mappings, arrays lists.
struct JsonTree {
  static bool is_map(const nlohmann::json& j) { return j.is_object(); }
  static bool is_list(const nlohmann::json& j) { return j.is_array(); }
  static std::size_t size(const nlohmann::json& j) { return j.size(); }
  static const nlohmann::json& at(const nlohmann::json& j, std::size_t i) { return j[i]; }
  template <class F>
  static void each_entry(const nlohmann::json& j, const F& f) {
    for (const auto& [k, v] : j.items()) f(k, v);
  }
};

/// Every leaf of `j` by its dotted path (visit_leaf_paths); a scalar `j` is the one path "".
inline std::map<std::string, nlohmann::json> leaf_paths(const nlohmann::json& j) {
  std::map<std::string, nlohmann::json> out;
  visit_leaf_paths<JsonTree>(j, "", [&](const std::string& path, const nlohmann::json& v) { out[path] = v; });
  return out;
}

}  // namespace harness::json
