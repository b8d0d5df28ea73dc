#pragma once
// A connection's addresses as text: the peer's address (the key of the per-address connection
// limit) and the address and port httplib asks of a stream.
#include <sys/socket.h>

#include <string>

namespace harness::agent {

/// The peer address of the connected socket `fd` as text (an IPv4-mapped IPv6 address as IPv4),
/// "?" when it has none.
std::string peer_address(int fd);

/// The address (text) and port of `ss`, IPv4 or IPv6; left as they are for another family.
void ip_and_port(const sockaddr_storage& ss, std::string& ip, int& port);

}  // namespace harness::agent
