// The rules of a request head (see request_head.hpp).
#include "harness/agent/http/request_head.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace harness::agent {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// True for the characters of an HTTP token (RFC 9110 section 5.6.2: a field name).
bool tchar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

/// "header NAME" when `name` is a short token, else "a header" (a refusal never quotes
/// bytes it has not vetted).
std::string header_shown(std::string_view name) {
  if (name.empty() || name.size() > 64 || !std::all_of(name.begin(), name.end(), tchar)) return "a header";
  return "header " + std::string(name);
}

}  // namespace

bool request_line_ok(std::string_view line) {
  const auto sp1 = line.find(' ');
  if (sp1 == std::string_view::npos || sp1 == 0) return false;
  const auto sp2 = line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || sp2 == sp1 + 1 || line.find(' ', sp2 + 1) != std::string_view::npos)
    return false;
  for (char c : line.substr(0, sp1))
    if (c < 'A' || c > 'Z') return false;
  const std::string_view version = line.substr(sp2 + 1);
  return version == "HTTP/1.1" || version == "HTTP/1.0";
}

Checked check_header(std::string_view line, bool& content_length, bool& chunked, unsigned long long& length) {
  if (line.front() == ' ' || line.front() == '\t') return problem("folded header line (obs-fold) in the request head");
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) return {};  // httplib ignores it
  const std::string_view name = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
  if (value.find('%') != std::string_view::npos)
    return problem("a '%' in the value of " + header_shown(name) +
                   " (the HTTP library decodes %XX in header values, so the agent would act on other bytes than "
                   "those sent; no header the agent reads holds one)");
  if (iequals(name, "Content-Length")) {
    if (content_length) return problem("more than one Content-Length header");
    if (value.empty() || value.size() > 19 || value.find_first_not_of("0123456789") != std::string_view::npos)
      return problem("Content-Length is not a decimal number of bytes");
    content_length = true;
    length = std::stoull(std::string(value));
  } else if (iequals(name, "Transfer-Encoding")) {
    if (chunked || !iequals(value, "chunked"))
      return problem("Transfer-Encoding other than one 'chunked' is not accepted");
    chunked = true;
  }
  if (content_length && chunked) return problem("both Content-Length and Transfer-Encoding given");
  return {};
}

bool is_range(std::string_view line) {
  const auto colon = line.find(':');
  return colon != std::string_view::npos && iequals(trim(line.substr(0, colon)), "Range");
}

}  // namespace harness::agent
