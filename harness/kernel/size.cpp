// Byte-size formatting and parsing (size.hpp).
#include "harness/kernel/size.hpp"

#include <cctype>
#include <stdexcept>

#include "harness/kernel/errors.hpp"
#include "harness/kernel/keyed.hpp"
#include "harness/kernel/text.hpp"

namespace harness::kernel {

std::string format_size_suffix(std::uint64_t bytes) {
  static const struct {
    std::uint64_t mult;
    char suffix;
  } units[] = {{1ull << 40, 'T'}, {1ull << 30, 'G'}, {1ull << 20, 'M'}, {1ull << 10, 'K'}};
  if (bytes == 0) return "0";
  for (const auto& u : units)
    if (bytes % u.mult == 0) return std::to_string(bytes / u.mult) + u.suffix;
  return std::to_string(bytes);
}

std::string format_limit(const MemoryLimit& l) { return l.bytes ? std::to_string(*l.bytes) : "max"; }

MemoryLimit parse_limit(std::string_view text, const std::string& file, const std::string& field) {
  auto t = trim(text);
  if (t == "max") return MemoryLimit::unlimited();
  return MemoryLimit::of_bytes(parse_u64(t, file, 1, field));
}

std::uint64_t parse_human_size(std::string_view text, const std::string& what) {
  auto t = trim(text);
  size_t i = 0;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
  if (i == 0) throw std::invalid_argument(what + ": expected a size like 96M, 1G or 4096, got '" + std::string(text) + "'");
  std::uint64_t n = 0;
  for (size_t k = 0; k < i; ++k) {
    if (n > (UINT64_MAX - 9) / 10) throw std::invalid_argument(what + ": size '" + std::string(text) + "' too large");
    n = n * 10 + static_cast<unsigned>(t[k] - '0');
  }
  std::string_view suf = t.substr(i);
  std::uint64_t mult = 1;
  if (!suf.empty()) {
    char c = static_cast<char>(std::toupper(static_cast<unsigned char>(suf[0])));
    switch (c) {
      case 'K': mult = 1ull << 10; break;
      case 'M': mult = 1ull << 20; break;
      case 'G': mult = 1ull << 30; break;
      case 'T': mult = 1ull << 40; break;
      case 'B': mult = 1; break;
      default:
        throw std::invalid_argument(what + ": unknown unit '" + std::string(suf) + "' in '" + std::string(text) +
                                    "' (use K, M, G or T, powers of 1024)");
    }
    std::string_view rest = suf.substr(1);
    if (c != 'B' && !(rest.empty() || rest == "iB" || rest == "B" || rest == "ib"))
      throw std::invalid_argument(what + ": unknown unit '" + std::string(suf) + "' in '" + std::string(text) + "'");
    if (c == 'B' && !rest.empty())
      throw std::invalid_argument(what + ": unknown unit '" + std::string(suf) + "' in '" + std::string(text) + "'");
  }
  if (mult > 1 && n > UINT64_MAX / mult) throw std::invalid_argument(what + ": size '" + std::string(text) + "' too large");
  return n * mult;
}

}  // namespace harness::kernel
