#pragma once
// Field-by-field comparison of two JSON documents (used to hold cases.outcome_json to a
// fixture captured from an earlier build): the same keys at every level, the same JSON
// type at every path (signed and unsigned integers are one type: a parsed non-negative
// integer is unsigned), arrays of the same length, and equal values except where
// `is_volatile(path)` says the value is a measurement of the run (times, counters, pids).
// Header-only; include as "tests/common/json_compare.hpp".
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace test_support {

/// "integer" for both integer kinds, else nlohmann's type name.
inline std::string json_kind(const nlohmann::json& j) {
  if (j.is_number_integer()) return "integer";
  return j.type_name();
}

/// Every difference between `want` and `got`, one sentence each naming the path
/// ("harness_self.schedule.cpu_ns"; array elements as "[i]"). Empty = the same shape,
/// and the same values wherever `is_volatile(path)` is false.
inline std::vector<std::string> json_differences(const nlohmann::json& want, const nlohmann::json& got,
                                                 const std::function<bool(const std::string&)>& is_volatile,
                                                 const std::string& path = "") {
  std::vector<std::string> out;
  const std::string where = path.empty() ? "(top)" : path;
  if (json_kind(want) != json_kind(got)) {
    out.push_back(where + ": type " + json_kind(got) + " (" + got.dump() + "), expected " + json_kind(want) + " (" +
                  want.dump() + ")");
    return out;
  }
  auto join = [&](const std::string& k) { return path.empty() ? k : path + "." + k; };
  if (want.is_object()) {
    for (auto it = want.begin(); it != want.end(); ++it) {
      if (!got.contains(it.key())) {
        out.push_back(join(it.key()) + ": missing");
        continue;
      }
      auto sub = json_differences(it.value(), got.at(it.key()), is_volatile, join(it.key()));
      out.insert(out.end(), sub.begin(), sub.end());
    }
    for (auto it = got.begin(); it != got.end(); ++it)
      if (!want.contains(it.key())) out.push_back(join(it.key()) + ": unexpected key (" + it.value().dump() + ")");
    return out;
  }
  if (want.is_array()) {
    if (want.size() != got.size()) {
      out.push_back(where + ": " + std::to_string(got.size()) + " elements, expected " + std::to_string(want.size()));
      return out;
    }
    for (std::size_t i = 0; i < want.size(); ++i) {
      auto sub = json_differences(want[i], got[i], is_volatile, path + "[" + std::to_string(i) + "]");
      out.insert(out.end(), sub.begin(), sub.end());
    }
    return out;
  }
  if (!is_volatile(path) && want != got) out.push_back(where + ": " + got.dump() + ", expected " + want.dump());
  return out;
}

}  // namespace test_support
