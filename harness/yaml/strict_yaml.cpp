// The strict YAML reader (see strict_yaml.hpp).
#include "harness/yaml/strict_yaml.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <vector>

namespace harness::yaml {
namespace {

std::string place(const std::string& file, const YAML::Mark& m) {
  return file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

/// One walk over the parsed document: depth, node budget and duplicate keys.
class TreeCheck {
 public:
  TreeCheck(const std::string& file, const Limits& limits) : file_(file), limits_(limits) {}

  void walk(const YAML::Node& n, const std::string& path, int depth) {
    if (++visited_ > limits_.max_nodes)
      throw InputError(place(file_, n.Mark()) + ": more than " + std::to_string(limits_.max_nodes) +
                       " YAML nodes (aliases count every time they are used): refused");
    if (!n.IsMap() && !n.IsSequence()) return;
    if (depth >= limits_.max_depth)
      throw InputError(place(file_, n.Mark()) + ": field " + (path.empty() ? "(top)" : path) + ": nested deeper than " +
                       std::to_string(limits_.max_depth) + " levels: refused");
    if (n.IsSequence()) {
      for (std::size_t i = 0; i < n.size(); ++i) walk(n[i], path + "[" + std::to_string(i) + "]", depth + 1);
      return;
    }
    std::map<std::string, YAML::Mark> seen;
    for (const auto& kv : n) {
      const std::string k = kv.first.IsScalar() ? kv.first.Scalar() : std::string("(non-scalar key)");
      const std::string f = path.empty() ? k : path + "." + k;
      if (!kv.first.IsScalar()) fail(file_, kv.first, f, "a mapping key must be a scalar");
      const auto [it, fresh] = seen.emplace(k, kv.first.Mark());
      if (!fresh)
        throw InputError(place(file_, kv.first.Mark()) + ": field " + f + ": duplicate key (first given at " +
                         place(file_, it->second) + ")");
      walk(kv.second, f, depth + 1);
    }
  }

 private:
  const std::string& file_;
  const Limits& limits_;
  std::size_t visited_ = 0;
};

}  // namespace

YAML::Node parse(const std::string& text, const std::string& file, const Limits& limits) {
  if (text.size() > limits.max_bytes)
    throw InputError(file + ": " + std::to_string(text.size()) + " bytes, more than the " +
                     std::to_string(limits.max_bytes) + " a YAML input may have: refused");
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {  // DeepRecursion (yaml-cpp's 2000 levels) included
    throw InputError(file + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                     ": YAML syntax: " + e.msg);
  } catch (const YAML::Exception& e) {
    throw InputError(file + ": YAML: " + e.what());
  }
  if (!root) return YAML::Node(YAML::NodeType::Null);
  TreeCheck(file, limits).walk(root, "", 0);
  return root;
}

std::string read_text(const std::string& path, const Limits& limits) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open");
  std::string text;
  text.resize(limits.max_bytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw InputError(path + ": cannot read");
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > limits.max_bytes)
    throw InputError(path + ": more than the " + std::to_string(limits.max_bytes) +
                     " bytes a YAML input may have: refused");
  return text;
}

YAML::Node parse_file(const std::string& path, const Limits& limits, std::string* text_out) {
  std::string text = read_text(path, limits);
  YAML::Node n = parse(text, path, limits);
  if (text_out) *text_out = std::move(text);
  return n;
}

void fail(const std::string& file, const YAML::Node& at, const std::string& field, const std::string& msg) {
  throw InputError(place(file, at.Mark()) + ": field " + field + ": " + msg);
}

bool has_leading_zero(const std::string& scalar) {
  static const std::regex leading_zero("[-+]?0[0-9]+([.][0-9]*)?");
  return std::regex_match(scalar, leading_zero);
}

Section::Section(const YAML::Node& node, std::string path, std::string file)
    : node_(node), path_(std::move(path)), file_(std::move(file)) {
  if (!node_.IsMap()) fail(node_, path_.empty() ? "(top)" : path_, "expected a mapping");
}

void Section::fail(const YAML::Node& at, const std::string& field, const std::string& msg) const {
  yaml::fail(file_, at, field, msg);
}

std::string Section::field(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

bool Section::has(const std::string& key) const { return static_cast<bool>(node_[key]); }

YAML::Node Section::get(const std::string& key, bool required) {
  used_.insert(key);
  YAML::Node n = node_[key];
  if (!n && required) fail_missing({key}, key, "missing (required)");
  return n;
}

void Section::fail_missing(const std::vector<std::string>& keys, const std::string& field_key, const std::string& msg) {
  for (const auto& k : keys) used_.insert(k);
  // A typo of a required key: name the typo's line, not only the missing key.
  for (const auto& kv : node_) {
    const std::string k = kv.first.Scalar();
    if (used_.count(k)) continue;
    if (const std::string near = nearest_name(k, keys); !near.empty())
      fail(kv.first, field(k), "unknown key (did you mean '" + near + "'? it is required and missing)");
  }
  fail(node_, field(field_key), msg);
}

YAML::Node Section::at(const std::string& key) const {
  const YAML::Node n = node_[key];
  return n ? n : node_;
}

Section Section::child(const std::string& key, bool required) {
  YAML::Node n = get(key, required);
  return Section(n ? n : YAML::Node(YAML::NodeType::Map), field(key), file_);
}

void Section::finish() const {
  for (const auto& kv : node_) {
    const std::string k = kv.first.Scalar();
    if (used_.count(k)) continue;
    fail(kv.first, field(k), "unknown key" + did_you_mean(k, used_));
  }
}

std::int64_t positive_int(Section& s, const std::string& key, std::optional<std::int64_t> def) {
  const auto v = def ? s.scalar<std::int64_t>(key, *def) : s.scalar<std::int64_t>(key);
  if (v <= 0) s.fail(s.at(key), s.field(key), "must be > 0 (got " + std::to_string(v) + ")");
  return v;
}

void check_name(const Section& s, const YAML::Node& at, const std::string& field, const std::string& v,
                const char* re_text) {
  if (!std::regex_match(v, std::regex(re_text))) s.fail(at, field, "'" + v + "' does not match " + re_text);
}

YAML::Node key_node(const YAML::Node& map, const std::string& key) {
  for (const auto& kv : map)
    if (kv.first.Scalar() == key) return kv.first;
  return map;
}

}  // namespace harness::yaml
