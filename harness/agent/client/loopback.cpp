// The loopback check (see loopback.hpp).
#include "harness/agent/client/loopback.hpp"

#include <arpa/inet.h>

namespace harness::agent {

bool is_loopback_address(const std::string& host) {
  if (host == "localhost" || host == "::1" || host == "[::1]") return true;
  in_addr a{};
  return ::inet_pton(AF_INET, host.c_str(), &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

bool url_is_loopback(const std::string& url) {
  const auto scheme_end = url.find("://");
  std::string rest = scheme_end == std::string::npos ? url : url.substr(scheme_end + 3);
  rest = rest.substr(0, rest.find('/'));
  if (!rest.empty() && rest[0] == '[') return is_loopback_address(rest.substr(0, rest.find(']') + 1));
  return is_loopback_address(rest.substr(0, rest.find(':')));
}

}  // namespace harness::agent
