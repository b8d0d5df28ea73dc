// The error answer of every handler (see answer.hpp).
#include "harness/agent/answer.hpp"

#include "harness/agent/json_text.hpp"
#include "harness/json/limited_parse.hpp"

#include <string_view>

namespace harness::agent {
using nlohmann::json;

void send_error(httplib::Response& res, int status, const std::string& msg, const std::string& field,
                const json& extra) {
  json j = extra;
  j["error"] = harness::json::printable(msg, std::string_view::npos);
  j["field"] = field.empty() ? json(nullptr) : json(harness::json::printable(field, std::string_view::npos));
  res.status = status;
  res.set_content(dump(j), "application/json");
}

void send_json(httplib::Response& res, const json& body, int status) {
  res.status = status;
  res.set_content(dump(body), "application/json");
}

}  // namespace harness::agent
