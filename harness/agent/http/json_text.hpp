#pragma once
// JSON text of the agent's answers and state files: every answer can be written, whatever
// bytes a path or an error text holds, and a field of the wrong type reads as a default.
#include <nlohmann/json.hpp>

#include <string>

namespace harness::agent {

/// JSON text of `j` (`indent` as nlohmann's dump: -1 = one line); bytes that are not UTF-8
/// (a path, a message) become U+FFFD instead of throwing.
std::string dump(const nlohmann::json& j, int indent = -1);

/// j[key] when `j` is an object whose `key` is a string, else `dflt`.
std::string str_or(const nlohmann::json& j, const char* key, const std::string& dflt);

}  // namespace harness::agent
