#pragma once
// cloud-init user-data that turns a fresh Debian 12 VM into a qualified harness VM:
// writes the agent's bearer token (0600) and optionally its TLS certificate and key,
// installs the reclaim-harness .deb (embedded, or downloaded and checked by SHA-256), and
// enables the agent. One file for the whole fleet: every VM gets the same token and
// certificate (the hosts file then lists one token_file and one tls_pin_sha256).
#include <string>

namespace harness::packaging {

/// Inputs of `harness fleet cloud-init`. Paths are read on the workstation.
struct CloudInitOptions {
  std::string token_file;     ///< required: bearer token (mode 0600), written as /etc/reclaim-harness/agent.token
  std::string deb_path;       ///< the .deb to embed (base64); exclusive with deb_url
  std::string deb_url;        ///< URL the VM downloads the .deb from; needs deb_sha256
  std::string deb_sha256;     ///< 64 hex, checked on the VM before installing
  std::string tls_cert_file;  ///< optional PEM certificate for the agent (else prepare-vm makes a self-signed one)
  std::string tls_key_file;   ///< its key; both or neither
  std::string swapfile_mib;   ///< optional override of HARNESS_SWAPFILE_MIB (digits)
};

/// The Debian package this project builds (harness/scripts/package.sh).
inline constexpr const char* kPackageName = "reclaim-harness";

/// The `Package:` field of a .deb (`dpkg-deb --field`). Throws std::runtime_error naming
/// --deb when the file cannot be read or is not a Debian package.
std::string deb_package_name(const std::string& deb_path);

/// The #cloud-config document. Throws std::runtime_error naming the option or file when
/// the token file is missing, empty or not 0600, its token breaks the agent's token rule
/// (harness/agent/http/token.hpp judge_token: the agent would refuse to start), neither or both of deb_path / deb_url are
/// given, deb_path is not a Debian package named reclaim-harness, deb_url lacks a valid
/// deb_sha256, only one of the TLS files is given, or a file cannot be read. The document's
/// header says it carries the token (and the TLS key, when given) in clear text.
std::string cloud_init_user_data(const CloudInitOptions& o);

}  // namespace harness::packaging
