#pragma once
// The one strict YAML reader every YAML input of the harness goes through: campaign files
// (harness/campaign/model/campaign_yaml.cpp), each engine's `provider:` block (harness/pool/) and
// hosts files (harness/pool/hosts/hosts_file.cpp). Rules (ours; docs/CAMPAIGN.md):
// - a file larger than Limits::max_bytes, nested deeper than Limits::max_depth or with more
//   than Limits::max_nodes nodes (aliases count every time they are reached) is refused
//   before any of it is interpreted, so a hostile file can neither overflow the stack nor
//   make a walk over it take forever (yaml-cpp's own parser stops at 2000 levels);
// - a key given twice in one mapping is refused, naming both places (yaml-cpp would keep
//   the first silently, other YAML tools the last);
// - a number with a leading zero (`0300`) is refused (YAML 1.1 reads it as octal 192);
// - a key nobody asked for is refused, with a did-you-mean suggestion within edit distance 2;
// - every error reads "FILE:LINE:COL: field a.b[i].c: message" (1-based line and column).
#include <yaml-cpp/yaml.h>

#include "harness/yaml/did_you_mean.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace harness::yaml {

/// Bad YAML input; what() reads "FILE:LINE:COL: field PATH: message" (or "FILE: message"
/// when no place applies: unreadable or oversized file).
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Bounds on one document (ours: the largest repository campaign is about 8 KiB and 4 levels deep).
struct Limits {
  std::size_t max_bytes = 1 << 20;  ///< bytes of text
  int max_depth = 32;               ///< nested mappings / sequences below the root
  std::size_t max_nodes = 100000;   ///< nodes visited, every alias occurrence counted
};

/// Parses `text` (named `file` in errors), then checks the limits and duplicate keys over the
/// whole document. An empty document gives a Null node. Throws InputError.
YAML::Node parse(const std::string& text, const std::string& file, const Limits& limits = {});

/// The bytes of `path`. Throws InputError ("PATH: cannot open ...", or a file larger than
/// limits.max_bytes, never read further).
std::string read_text(const std::string& path, const Limits& limits = {});

/// Reads `path` (read_text: at most limits.max_bytes) and parse()s it; `text_out`, when given,
/// receives the bytes. Throws InputError ("PATH: cannot open ...") when unreadable.
YAML::Node parse_file(const std::string& path, const Limits& limits = {}, std::string* text_out = nullptr);

/// Throws InputError "FILE:LINE:COL: field FIELD: MSG" at the place of `at` (its Mark()).
[[noreturn]] void fail(const std::string& file, const YAML::Node& at, const std::string& field,
                       const std::string& msg);

/// True when `scalar` is a number written with a leading zero ("0300", "-012", "00.5").
bool has_leading_zero(const std::string& scalar);

/// A YAML mapping whose keys are consumed one by one; finish() refuses the leftovers.
/// `path` is the dotted field prefix ("" at the top, "provider", "hosts[2]").
class Section {
 public:
  /// Throws InputError when `node` is not a mapping.
  Section(const YAML::Node& node, std::string path, std::string file);

  [[noreturn]] void fail(const YAML::Node& at, const std::string& field, const std::string& msg) const;

  /// `key` with this section's path ("provider.count").
  std::string field(const std::string& key) const;

  bool has(const std::string& key) const;

  /// The child node (marks the key used); a required one that is absent throws, naming a
  /// near-miss key of this section as the likely typo when there is one.
  YAML::Node get(const std::string& key, bool required);

  /// A required key is missing: one of `keys` (alternatives: "give a or b"). An unknown key of
  /// this section within edit distance 2 of one of them is reported first, as that key ("field
  /// design.triplets_per_regim: unknown key (did you mean 'triplets_per_regime'? it is required
  /// and missing)"), since it is most likely the typo; else fails at this section with `msg`,
  /// naming field `field_key`.
  [[noreturn]] void fail_missing(const std::vector<std::string>& keys, const std::string& field_key, const std::string& msg);

  /// The value node of `key` when present, else this section's node (where to point an error).
  YAML::Node at(const std::string& key) const;

  /// A required scalar.
  template <typename T>
  T scalar(const std::string& key) {
    return as<T>(get(key, true), field(key));
  }

  /// An optional scalar with a default.
  template <typename T>
  T scalar(const std::string& key, T def) {
    YAML::Node n = get(key, false);
    if (!n) return def;
    return as<T>(n, field(key));
  }

  /// An optional scalar; absent or null gives nullopt.
  template <typename T>
  std::optional<T> optional_scalar(const std::string& key) {
    YAML::Node n = get(key, false);
    if (!n || n.IsNull()) return std::nullopt;
    return as<T>(n, field(key));
  }

  /// `n` as T: refuses non-scalars, numbers with a leading zero and unconvertible text.
  template <typename T>
  T as(const YAML::Node& n, const std::string& f) const {
    if (!n.IsScalar()) fail(n, f, "expected a scalar value");
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      if (has_leading_zero(n.Scalar()))
        fail(n, f, "'" + n.Scalar() + "' has a leading zero (YAML 1.1 would read it as octal); write it without");
    }
    try {
      return n.as<T>();
    } catch (const YAML::Exception&) {
      fail(n, f, "cannot read '" + n.Scalar() + "' as " + type_name<T>());
    }
  }

  /// The child mapping `key` (an absent optional one is an empty mapping).
  Section child(const std::string& key, bool required = true);

  /// Refuses keys never asked for (typos, unsupported settings), suggesting the closest
  /// key of this section that was asked for.
  void finish() const;

  const YAML::Node& node() const { return node_; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }

 private:
  template <typename T>
  static const char* type_name() {
    if constexpr (std::is_same_v<T, bool>) return "a boolean";
    else if constexpr (std::is_integral_v<T>) return "an integer";
    else if constexpr (std::is_floating_point_v<T>) return "a number";
    else return "a string";
  }

  YAML::Node node_;
  std::string path_;
  std::string file_;
  std::set<std::string> used_;
};

/// A required (or defaulted) integer > 0 of `s`.
std::int64_t positive_int(Section& s, const std::string& key, std::optional<std::int64_t> def = std::nullopt);

/// Refuses `v` unless it matches the regular expression `re_text` (whole string).
void check_name(const Section& s, const YAML::Node& at, const std::string& field, const std::string& v,
                const char* re_text);

/// The key node of `key` in mapping `map` (its Mark() is the key's line), else `map`.
YAML::Node key_node(const YAML::Node& map, const std::string& key);

}  // namespace harness::yaml
