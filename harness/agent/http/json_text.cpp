// JSON text of the agent's answers and state files (see json_text.hpp).
#include "harness/agent/http/json_text.hpp"

namespace harness::agent {
using nlohmann::json;

std::string dump(const json& j, int indent) { return j.dump(indent, ' ', false, json::error_handler_t::replace); }

std::string str_or(const json& j, const char* key, const std::string& dflt) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : dflt;
}

}  // namespace harness::agent
