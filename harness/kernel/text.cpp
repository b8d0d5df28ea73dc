// Internal text helpers (text.hpp).
#include "harness/kernel/text.hpp"

namespace harness::kernel {

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    out.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return out;
}

std::vector<std::string_view> split_ws(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  auto ws = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (i < line.size()) {
    while (i < line.size() && ws(line[i])) ++i;
    size_t j = i;
    while (j < line.size() && !ws(line[j])) ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

namespace {
bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_octal(char c) { return c >= '0' && c <= '7'; }
// Whether s[i] starts an octal escape "\ooo" (a backslash and three octal digits).
bool octal_escape_at(std::string_view s, size_t i) {
  return s[i] == '\\' && i + 3 < s.size() && is_octal(s[i + 1]) && is_octal(s[i + 2]) && is_octal(s[i + 3]);
}
}  // namespace

bool next_line(std::string_view& text, std::string_view& line) {
  if (text.empty()) return false;
  const size_t nl = text.find('\n');
  line = text.substr(0, nl);
  text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
  return true;
}

bool next_word(std::string_view& line, std::string_view& word) {
  size_t i = 0;
  while (i < line.size() && is_ws(line[i])) ++i;
  size_t j = i;
  while (j < line.size() && !is_ws(line[j])) ++j;
  word = line.substr(i, j - i);
  line.remove_prefix(j);
  return j > i;
}

bool unescaped_equals(std::string_view escaped, std::string_view plain) {
  size_t k = 0;
  for (size_t i = 0; i < escaped.size(); ++i, ++k) {
    char c = escaped[i];
    if (octal_escape_at(escaped, i)) {
      c = static_cast<char>((escaped[i + 1] - '0') * 64 + (escaped[i + 2] - '0') * 8 + (escaped[i + 3] - '0'));
      i += 3;
    }
    if (k >= plain.size() || plain[k] != c) return false;
  }
  return k == plain.size();
}

std::string_view trim(std::string_view s) {
  auto ws = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && ws(s.front())) s.remove_prefix(1);
  while (!s.empty() && ws(s.back())) s.remove_suffix(1);
  return s;
}

std::string unescape_octal(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (octal_escape_at(s, i)) {
      out.push_back(static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

}  // namespace harness::kernel
