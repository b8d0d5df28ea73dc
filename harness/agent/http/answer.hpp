#pragma once
// The error answer of every handler (harness/agent/API.md: `{"error": "...", "field": ...}`).
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>

namespace harness::agent {

/// Longest `error` of an error answer, characters after escaping (ours, API.md "Errors").
inline constexpr std::size_t kMaxErrorChars = 2048;
/// Longest `field` of an error answer, characters after escaping (ours, API.md "Errors").
inline constexpr std::size_t kMaxFieldChars = 512;

/// Sets `res` to `status` with `extra` plus "error": `msg` and "field": `field` (null when
/// empty). Both may quote request text (a spec's value or key, a path), so every byte
/// outside printable ASCII is written as \xNN (harness::json::printable): an error never
/// carries raw request bytes such as ESC or BEL to the client's terminal or log (API.md).
/// The checks quote a request value as an excerpt (harness::json::excerpt: 64 bytes and its
/// length); whatever else a message holds, `error` is cut at kMaxErrorChars and `field` at
/// kMaxFieldChars, each with "... (N bytes in all)", so an error answer stays within a few
/// KiB whatever the request.
void send_error(httplib::Response& res, int status, const std::string& msg, const std::string& field = "",
                const nlohmann::json& extra = nlohmann::json::object());

/// Sets `res` to `status` with `body` as application/json.
void send_json(httplib::Response& res, const nlohmann::json& body, int status = 200);

}  // namespace harness::agent
