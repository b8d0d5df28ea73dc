// One split of a host URI (see uri_parts.hpp).
#include "harness/pool/uri_parts.hpp"

namespace harness::pool {

std::optional<UriParts> split_uri(const std::string& text) {
  const auto sep = text.find("://");
  if (sep == std::string::npos || sep == 0) return std::nullopt;
  UriParts u;
  u.scheme = text.substr(0, sep);
  std::string rest = text.substr(sep + 3);
  if (const auto hash = rest.find('#'); hash != std::string::npos) rest.resize(hash);
  if (const auto q = rest.find('?'); q != std::string::npos) {
    u.query = rest.substr(q + 1);
    rest.resize(q);
  }
  const auto slash = rest.find('/');
  u.authority = slash == std::string::npos ? rest : rest.substr(0, slash);
  u.path = slash == std::string::npos ? "" : rest.substr(slash);
  if (const auto at = u.authority.rfind('@'); at != std::string::npos) {
    u.userinfo = u.authority.substr(0, at);
    u.authority = u.authority.substr(at + 1);
  }
  return u;
}

}  // namespace harness::pool
