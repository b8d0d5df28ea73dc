#pragma once
// A hypervisor host's identity: what Guest::host, cases.host_uri, the capacity table and
// the measured-cost cache (host_costs.hpp) know a host by. The rule for "two URIs reach the
// same machine" is stated once, in harness/pool/README.md "Host identity"; this is its code.
//
// A URI (anything with "://", e.g. a libvirt URI) is reduced to scheme + user + host + port
// + path: the scheme and host lower-cased, a password after the user dropped, and of the
// query only the parameters that choose the daemon (`socket=`, the daemon's socket path, and
// `name=`, the URI the remote end opens), sorted. Everything else in the query is a
// credential or an option of how to get there (`keyfile=`, `known_hosts=`, `no_verify=`,
// `command=`, `sshauth=`, `mode=`, ...): moving a key or turning host-key checking off does
// not make another host. Text without "://" ("local:HOSTNAME", a hosts file's free-text
// `hypervisor:` such as "hv2.lab") is its own identity, with surrounding blanks removed.
#include <string>

namespace harness::pool {

/// The identity of host `uri` (rule above). "" stays "". Never throws: a URI it cannot split
/// further keeps what it could not split.
std::string host_identity(const std::string& uri);

}  // namespace harness::pool
