// YAML to JSON (yaml_json.hpp).
#include "harness/yaml/yaml_json.hpp"

#include "harness/yaml/strict_yaml.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <regex>

namespace harness::yaml {

namespace {

nlohmann::json scalar(const YAML::Node& n) {
  const std::string& v = n.Scalar();
  if (n.Tag() == "!") return v;  // quoted: a string whatever it reads as
  static const std::regex integer("[-+]?[0-9]+");
  static const std::regex number("[-+]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]+)?");
  if (std::regex_match(v, integer)) {
    errno = 0;
    const long long x = std::strtoll(v.c_str(), nullptr, 10);
    if (errno == 0) return static_cast<std::int64_t>(x);
  }
  if (std::regex_match(v, number)) {
    const double x = std::strtod(v.c_str(), nullptr);
    if (std::isfinite(x)) return x;
  }
  if (v == "true") return true;
  if (v == "false") return false;
  if (v == "~" || v == "null") return nullptr;
  return v;
}

}  // namespace

nlohmann::json to_json(const YAML::Node& n, const std::string& file, const std::string& field) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json o = nlohmann::json::object();
      for (const auto& kv : n) {
        if (!kv.first.IsScalar()) fail(file, kv.first, field, "a mapping key must be a plain name");
        const std::string k = kv.first.Scalar();
        o[k] = to_json(kv.second, file, field + "." + k);
      }
      return o;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json a = nlohmann::json::array();
      for (std::size_t i = 0; i < n.size(); ++i) a.push_back(to_json(n[i], file, field + "[" + std::to_string(i) + "]"));
      return a;
    }
    case YAML::NodeType::Scalar:
      return scalar(n);
    default:
      return nullptr;
  }
}

}  // namespace harness::yaml
