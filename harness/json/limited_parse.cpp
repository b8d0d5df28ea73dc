// JSON with size and depth limits (limited_parse.hpp).
#include "harness/json/limited_parse.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace harness::json {
namespace {

struct Problem {
  Error::Kind kind;
  std::string text;
};

std::optional<Problem> find_problem(std::string_view t, const Limits& l) {
  if (t.size() > l.max_bytes)
    return Problem{Error::Kind::TooLarge,
                   "is " + std::to_string(t.size()) + " bytes (limit " + std::to_string(l.max_bytes) + " bytes)"};
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (in_string) {
      if (c == '\\')
        ++i;  // the escaped character cannot end the string
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > l.max_depth)
        return Problem{Error::Kind::TooDeep, "nests arrays/objects deeper than " + std::to_string(l.max_depth) +
                                                 " levels (limit " + std::to_string(l.max_depth) + ") at byte " +
                                                 std::to_string(i)};
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

}  // namespace

Checked check_limits(std::string_view text, const Limits& limits) {
  if (auto p = find_problem(text, limits)) return problem(p->text);
  return {};
}

nlohmann::json parse(std::string_view text, std::string_view source, const Limits& limits) {
  if (auto p = find_problem(text, limits)) throw Error(p->kind, std::string(source) + ": JSON " + p->text);
  try {
    return nlohmann::json::parse(text.data(), text.data() + text.size());
  } catch (const nlohmann::json::exception& e) {
    throw Error(Error::Kind::Malformed, std::string(source) + ": malformed JSON: " + printable(e.what(), 300));
  }
}

nlohmann::json parse_or_discarded(std::string_view text, const Limits& limits) {
  if (find_problem(text, limits)) return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(text.data(), text.data() + text.size(), nullptr, false);
}

nlohmann::json parse_file(const std::string& path, const Limits& limits) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(Error::Kind::Unreadable, path + ": cannot read: " + std::strerror(errno));
  std::string text;
  char buf[65536];
  while (text.size() <= limits.max_bytes && in.read(buf, sizeof buf).gcount() > 0)
    text.append(buf, static_cast<std::size_t>(in.gcount()));
  if (in.bad()) throw Error(Error::Kind::Unreadable, path + ": read error");
  if (text.size() > limits.max_bytes)
    throw Error(Error::Kind::TooLarge,
                path + ": JSON file is larger than " + std::to_string(limits.max_bytes) + " bytes (limit)");
  return parse(text, path, limits);
}

std::string printable(std::string_view s, std::size_t max) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  const std::size_t n = s.size() < max ? s.size() : max;
  out.reserve(n + 8);
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (n < s.size()) out += "...";
  return out;
}

std::string excerpt(std::string_view s, std::size_t max) {
  if (s.size() <= max) return std::string(s);
  return std::string(s.substr(0, max)) + "... (" + std::to_string(s.size()) + " bytes)";
}

}  // namespace harness::json
