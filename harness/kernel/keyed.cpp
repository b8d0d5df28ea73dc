// Flat keyed file parsers (keyed.hpp).
#include "harness/kernel/keyed.hpp"

#include <charconv>
#include <cstring>
#include <sstream>
#include <vector>

#include "harness/kernel/errors.hpp"
#include "harness/kernel/text.hpp"

namespace harness::kernel {

std::optional<std::uint64_t> KeyedValues::get(std::string_view key) const {
  auto it = values.find(std::string(key));
  if (it == values.end()) return std::nullopt;
  return it->second;
}

std::uint64_t parse_u64(std::string_view s, const std::string& file, int line, const std::string& field) {
  std::uint64_t v = 0;
  if (s.empty()) throw ParseError(file, line, field, "empty value, expected an unsigned integer");
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range)
    throw ParseError(file, line, field, "value '" + std::string(s) + "' out of range for 64 bits");
  if (ec != std::errc() || ptr != s.data() + s.size())
    throw ParseError(file, line, field, "expected an unsigned integer, got '" + std::string(s) + "'");
  return v;
}

KeyedValues parse_keyed(std::string_view text, const std::string& file) {
  KeyedValues out;
  int lineno = 0;
  for (std::string_view line : split_lines(text)) {
    ++lineno;
    auto words = split_ws(line);
    if (words.empty()) continue;
    if (words.size() != 2)
      throw ParseError(file, lineno, std::string(words[0]),
                       "expected '<key> <value>', got " + std::to_string(words.size()) + " fields");
    std::string key(words[0]);
    auto v = parse_u64(words[1], file, lineno, key);
    if (!out.values.emplace(key, v).second) throw ParseError(file, lineno, key, "duplicate key");
  }
  return out;
}

namespace {
// pick_keyed's work for one line already split into `key` and `value`: the value of a wanted
// key is parsed and stored.
void take_keyed(std::string_view key, std::string_view value, int lineno, const std::string& file,
                const std::string_view* keys, std::optional<std::uint64_t>* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    if (key != keys[i]) continue;
    if (out[i]) throw ParseError(file, lineno, std::string(key), "duplicate key");
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    // parse_u64 only for the error, which names the key (a std::string: heap for long keys).
    if (ec != std::errc() || end != value.data() + value.size()) v = parse_u64(value, file, lineno, std::string(key));
    out[i] = v;
    return;
  }
}

// One line split into words at any whitespace: lines the fast path does not take, and every
// line's error.
void pick_keyed_words(std::string_view line, int lineno, const std::string& file, const std::string_view* keys,
                      std::optional<std::uint64_t>* out, std::size_t n) {
  std::string_view key, value, extra;
  if (!next_word(line, key)) return;  // blank
  const bool two = next_word(line, value) && !next_word(line, extra);
  if (!two) {
    std::size_t fields = value.empty() ? 1 : 3;
    while (next_word(line, extra)) ++fields;
    throw ParseError(file, lineno, std::string(key), "expected '<key> <value>', got " + std::to_string(fields) + " fields");
  }
  take_keyed(key, value, lineno, file, keys, out, n);
}
}  // namespace

void pick_keyed(std::string_view text, const std::string& file, const std::string_view* keys,
                std::optional<std::uint64_t>* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i].reset();
  // Fast path for what the kernel writes ("%s %llu\n"): when the text has no tab or carriage
  // return, a line "<key> <value>" (one space, neither part empty) is split with memchr (two
  // scans of libc's vector code) instead of word by word; any other line (leading, repeated
  // or trailing spaces, one field, three) goes the word way, with the same checks and errors.
  const bool spaces_only = std::memchr(text.data(), '\t', text.size()) == nullptr &&
                           std::memchr(text.data(), '\r', text.size()) == nullptr;
  int lineno = 0;
  std::string_view line;
  while (next_line(text, line)) {
    ++lineno;
    if (spaces_only && !line.empty() && line.front() != ' ') {
      const void* sp = std::memchr(line.data(), ' ', line.size());
      if (sp) {
        const std::size_t k = static_cast<const char*>(sp) - line.data();
        const std::string_view value = line.substr(k + 1);
        if (!value.empty() && std::memchr(value.data(), ' ', value.size()) == nullptr) {
          take_keyed(line.substr(0, k), value, lineno, file, keys, out, n);
          continue;
        }
      }
    }
    pick_keyed_words(line, lineno, file, keys, out, n);
  }
}

KeyedValues parse_meminfo(std::string_view text, const std::string& file) {
  KeyedValues out;
  int lineno = 0;
  for (std::string_view line : split_lines(text)) {
    ++lineno;
    if (split_ws(line).empty()) continue;
    auto colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0)
      throw ParseError(file, lineno, std::string(trim(line)), "expected '<Key>: <value>[ kB]'");
    std::string key(trim(line.substr(0, colon)));
    auto words = split_ws(line.substr(colon + 1));
    if (words.empty() || words.size() > 2 || (words.size() == 2 && words[1] != "kB"))
      throw ParseError(file, lineno, key, "expected '<value>' or '<value> kB' after the colon");
    auto v = parse_u64(words[0], file, lineno, key);
    if (!out.values.emplace(key, v).second) throw ParseError(file, lineno, key, "duplicate key");
  }
  return out;
}

}  // namespace harness::kernel
