// The error answer of every handler (see answer.hpp).
#include "harness/agent/http/answer.hpp"

#include "harness/agent/http/json_text.hpp"
#include "harness/json/limited_parse.hpp"

#include <string_view>

namespace harness::agent {
using nlohmann::json;
namespace {

/// `s` escaped as harness::json::printable does, at most `max` characters of it; when more
/// would follow, the escaped prefix and "... (N bytes in all)" with the length of `s`.
std::string escaped_within(std::string_view s, std::size_t max) {
  std::string out;
  std::size_t i = 0;
  for (; i < s.size(); ++i) {
    const std::string one = harness::json::printable(s.substr(i, 1), 1);
    if (out.size() + one.size() > max) break;
    out += one;
  }
  if (i < s.size()) out += "... (" + std::to_string(s.size()) + " bytes in all)";
  return out;
}

}  // namespace

void send_error(httplib::Response& res, int status, const std::string& msg, const std::string& field,
                const json& extra) {
  json j = extra;
  j["error"] = escaped_within(msg, kMaxErrorChars);
  j["field"] = field.empty() ? json(nullptr) : json(escaped_within(field, kMaxFieldChars));
  res.status = status;
  res.set_content(dump(j), "application/json");
}

void send_json(httplib::Response& res, const json& body, int status) {
  res.status = status;
  res.set_content(dump(body), "application/json");
}

}  // namespace harness::agent
