// The limits of a submitted case spec's JSON (see spec_body_limits.hpp).
#include "harness/agent/cases/spec_body_limits.hpp"

#include "harness/json/limited_parse.hpp"

#include <cstring>
#include <vector>

namespace harness::agent {
namespace {

using Verdict = SpecBodyScan::Verdict;

/// An array or object the scan is inside: the key of its current member (objects) or the
/// index of its current element (arrays), and whether a key comes next.
struct Frame {
  bool object = false;
  std::string_view key;
  std::size_t index = 0;
  bool expect_key = false;
};

/// Deeper than this the scan stops: the parser's own depth limit (64) refuses the body.
constexpr std::size_t kMaxScanDepth = 64;

/// The path of the current member of the first `n` frames, as the spec's errors name a
/// field: "backend.swapfile_path", "variant.cmdline[2]".
std::string path_of(const std::vector<Frame>& frames, std::size_t n) {
  std::string p;
  for (std::size_t k = 0; k < n; ++k) {
    if (frames[k].object)
      p += (p.empty() ? "" : ".") + harness::json::excerpt(frames[k].key);
    else
      p += "[" + std::to_string(frames[k].index) + "]";
  }
  return p;
}

/// The index of the quote that closes the string opened at `i`, or npos (not closed).
std::size_t string_end(std::string_view b, std::size_t i) {
  for (++i; i < b.size(); ++i) {
    if (b[i] == '\\')
      ++i;  // the escaped character cannot close the string
    else if (b[i] == '"')
      return i;
  }
  return std::string_view::npos;
}

/// The refusal of string `s` (a key when `is_key`) at the current position of `frames`.
SpecBodyScan long_string(const std::vector<Frame>& frames, std::string_view s, bool is_key) {
  std::string field = path_of(frames, frames.size() - (is_key ? 1 : 0));
  if (is_key) field += (field.empty() ? "" : ".") + harness::json::excerpt(s);
  return {Verdict::StringTooLong, field,
          std::string(is_key ? "a key" : "a string") + " longer than " + std::to_string(kMaxSpecStringBytes) +
              " bytes (limit): '" + harness::json::excerpt(s) + "'"};
}

}  // namespace

SpecBodyScan scan_spec_body(std::string_view b) {
  std::vector<Frame> frames;
  std::size_t values = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    const char c = b[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    if (c == ':' || c == ',') {
      if (!frames.empty() && frames.back().object) frames.back().expect_key = c == ',';
      if (!frames.empty() && !frames.back().object && c == ',') ++frames.back().index;
      continue;
    }
    if (c == '}' || c == ']') {
      if (!frames.empty()) frames.pop_back();
      continue;
    }
    const bool is_key = c == '"' && !frames.empty() && frames.back().object && frames.back().expect_key;
    if (!is_key && ++values > kMaxSpecValues)
      return {Verdict::TooManyValues, path_of(frames, frames.size()),
              "more than " + std::to_string(kMaxSpecValues) + " JSON values (limit; a case spec has a few dozen)"};
    if (c == '"') {
      const std::size_t end = string_end(b, i);
      if (end == std::string_view::npos) return {};  // malformed: the parser says so
      const std::string_view s = b.substr(i + 1, end - i - 1);
      if (s.size() > kMaxSpecStringBytes) return long_string(frames, s, is_key);
      if (is_key) frames.back().key = s;
      i = end;
    } else if (c == '{' || c == '[') {
      if (frames.size() >= kMaxScanDepth) return {};  // the parser's depth limit refuses it
      frames.push_back({c == '{', {}, 0, c == '{'});
    } else {
      while (i + 1 < b.size() && std::strchr(",]} \t\r\n:", b[i + 1]) == nullptr) ++i;  // a number, true, ...
    }
  }
  return {};
}

}  // namespace harness::agent
