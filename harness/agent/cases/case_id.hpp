#pragma once
// Case-id check applied to every id taken from a URL path or a submitted spec before any
// file is touched (harness/agent/API.md): [A-Za-z0-9._-]{1,128}, not "." or "..".
#include <string_view>

namespace harness::agent {

/// True when `id` is a safe case id (it can name a directory under the state dir).
bool safe_case_id(std::string_view id);

}  // namespace harness::agent
