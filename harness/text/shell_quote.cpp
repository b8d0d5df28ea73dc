// POSIX sh quoting (see shell_quote.hpp).
#include "harness/text/shell_quote.hpp"

#include "harness/text/join.hpp"

#include <string_view>
#include <vector>

namespace harness::text {
namespace {

bool bare_byte(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         std::string_view("_./=:,+@%-").find(static_cast<char>(c)) != std::string_view::npos;
}

}  // namespace

std::string shell_quote(const std::string& arg) {
  bool bare = !arg.empty();
  for (unsigned char c : arg) bare = bare && bare_byte(c);
  if (bare) return arg;
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string shell_join(int argc, const char* const* argv) {
  return join(std::vector<std::string>(argv, argv + argc), " ", shell_quote);
}

}  // namespace harness::text
