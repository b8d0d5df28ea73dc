// XML 1.0 text escaping (see text.hpp).
#include "harness/xml/text.hpp"

#include <cstdint>
#include <cstdio>

namespace harness::xml {

namespace {

void hex_byte(std::string& o, unsigned char b) {
  char buf[5];
  std::snprintf(buf, sizeof buf, "\\x%02x", b);
  o += buf;
}

/// Length of the ANSI escape sequence starting with ESC at s[i] (0 when it is not one).
std::size_t ansi_length(std::string_view s, std::size_t i) {
  if (i + 1 >= s.size()) return 0;
  const auto c = static_cast<unsigned char>(s[i + 1]);
  if (c == '[') {  // CSI: parameters 0x30-0x3F, intermediates 0x20-0x2F, final 0x40-0x7E
    std::size_t j = i + 2;
    while (j < s.size() && static_cast<unsigned char>(s[j]) >= 0x30 && static_cast<unsigned char>(s[j]) <= 0x3F) ++j;
    while (j < s.size() && static_cast<unsigned char>(s[j]) >= 0x20 && static_cast<unsigned char>(s[j]) <= 0x2F) ++j;
    if (j < s.size() && static_cast<unsigned char>(s[j]) >= 0x40 && static_cast<unsigned char>(s[j]) <= 0x7E)
      return j + 1 - i;
    return 0;
  }
  if (c == ']') {  // OSC: up to BEL or ST (ESC backslash)
    for (std::size_t j = i + 2; j < s.size(); ++j) {
      if (s[j] == '\a') return j + 1 - i;
      if (s[j] == '\x1b' && j + 1 < s.size() && s[j + 1] == '\\') return j + 2 - i;
    }
    return 0;
  }
  if (c >= 0x40 && c <= 0x5F) return 2;  // two-byte escape (e.g. ESC M)
  return 0;
}

/// Length of the well-formed UTF-8 sequence at s[i] whose code point XML 1.0 allows (0: none).
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  std::size_t n = 0;
  std::uint32_t cp = 0, min = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) n = 2, cp = b0 & 0x1F, min = 0x80;
  else if (b0 >= 0xE0 && b0 <= 0xEF) n = 3, cp = b0 & 0x0F, min = 0x800;
  else if (b0 >= 0xF0 && b0 <= 0xF4) n = 4, cp = b0 & 0x07, min = 0x10000;
  else return 0;
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF) return 0;           // overlong, beyond Unicode
  if (cp >= 0xD800 && cp <= 0xDFFF) return 0;         // surrogate
  if (cp == 0xFFFE || cp == 0xFFFF) return 0;         // not an XML 1.0 Char
  return n;
}

}  // namespace

std::string xml_text(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '&': o += "&amp;"; break;
        case '<': o += "&lt;"; break;
        case '>': o += "&gt;"; break;
        case '"': o += "&quot;"; break;
        case '\'': o += "&apos;"; break;
        case '\r': o += "&#13;"; break;
        case '\n':
        case '\t': o += static_cast<char>(c); break;
        case 0x1b:
          if (const std::size_t n = ansi_length(s, i)) {
            i += n;
            continue;
          }
          hex_byte(o, c);
          break;
        default:
          if (c < 0x20) hex_byte(o, c);
          else o += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    if (const std::size_t n = utf8_length(s, i)) {
      o.append(s.substr(i, n));
      i += n;
    } else {
      hex_byte(o, c);
      ++i;
    }
  }
  return o;
}

}  // namespace harness::xml
