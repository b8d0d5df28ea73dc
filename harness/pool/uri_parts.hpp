#pragma once
// One split of a host URI ("scheme://[userinfo@]authority[/path][?query][#fragment]") for the
// two readers of host URIs: host_identity() and the libvirt engine's parse_uri(). Text only:
// nothing is decoded, lower-cased or validated here (each reader has its own rules).
#include <optional>
#include <string>

namespace harness::pool {

/// The parts of a URI, as written. `userinfo` is everything before the last '@' of the
/// authority (user, and a password after ':' when given); `authority` is host[:port] without
/// it; `path` starts with '/' or is empty; `query` is the text after '?' without the '?'. A
/// fragment ('#...') is dropped.
struct UriParts {
  std::string scheme, userinfo, authority, path, query;
};

/// Splits `text`; nullopt when it has no "://" or nothing before it.
std::optional<UriParts> split_uri(const std::string& text);

}  // namespace harness::pool
