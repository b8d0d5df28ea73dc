// A connection's addresses as text (see socket_address.hpp).
#include "harness/agent/http/socket_address.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

namespace harness::agent {

std::string peer_address(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?";
  char buf[INET6_ADDRSTRLEN] = {0};
  if (ss.ss_family == AF_INET) {
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&ss)->sin_addr, buf, sizeof buf);
  } else if (ss.ss_family == AF_INET6) {
    const auto* a6 = reinterpret_cast<sockaddr_in6*>(&ss);
    if (IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr))
      ::inet_ntop(AF_INET, &a6->sin6_addr.s6_addr[12], buf, sizeof buf);
    else
      ::inet_ntop(AF_INET6, &a6->sin6_addr, buf, sizeof buf);
  }
  return buf;
}

void ip_and_port(const sockaddr_storage& ss, std::string& ip, int& port) {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (ss.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    ::inet_ntop(AF_INET, &a->sin_addr, buf, sizeof buf);
    port = ntohs(a->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    ::inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof buf);
    port = ntohs(a->sin6_port);
  }
  ip = buf;
}

}  // namespace harness::agent
