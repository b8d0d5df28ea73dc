#pragma once
// Whether an address or a URL stays on this machine: the one loopback check of the harness
// (the agent's plain-HTTP rule for its --bind, the client's for a URL, the hosts file's, and
// the A/B report's "local guest" label).
#include <string>

namespace harness::agent {

/// True for a host that is loopback: 127.0.0.0/8 (dotted quad), ::1 (with or without
/// brackets) and "localhost". Anything else, 0.0.0.0 and names included, is false.
bool is_loopback_address(const std::string& host);

/// True when `url` (http:// or https://, or a bare host[:port]) names a loopback host
/// (is_loopback_address of its host part; "127.0.0.1.example.org" is not).
bool url_is_loopback(const std::string& url);

}  // namespace harness::agent
