#pragma once
// The error answer of every handler (harness/agent/API.md: `{"error": "...", "field": ...}`).
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <string>

namespace harness::agent {

/// Sets `res` to `status` with `extra` plus "error": `msg` and "field": `field` (null when
/// empty). Both may quote request text (a spec's value or key, a path), so every byte
/// outside printable ASCII is written as \xNN (harness::json::printable): an error never
/// carries raw request bytes such as ESC or BEL to the client's terminal or log (API.md).
void send_error(httplib::Response& res, int status, const std::string& msg, const std::string& field = "",
                const nlohmann::json& extra = nlohmann::json::object());

/// Sets `res` to `status` with `body` as application/json.
void send_json(httplib::Response& res, const nlohmann::json& body, int status = 200);

}  // namespace harness::agent
