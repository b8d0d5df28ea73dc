// libvirt handles and errors (virt.hpp).
#include "harness/pool/libvirt/virt.hpp"

#include "harness/pool/pool.hpp"
#include "harness/text/shell_quote.hpp"

#include <algorithm>
#include <cctype>

#include <cstdlib>
#include <mutex>

namespace harness::pool::libvirt {

namespace {
void ignore_error(void*, virErrorPtr) {}
}  // namespace

void quiet_libvirt_errors() {
  static std::once_flag once;
  std::call_once(once, [] {
    virInitialize();
    virSetErrorFunc(nullptr, ignore_error);
  });
}

std::string last_error() {
  virErrorPtr e = virGetLastError();
  return e && e->message ? e->message : "unknown libvirt error";
}

int last_error_code() {
  virErrorPtr e = virGetLastError();
  return e ? e->code : VIR_ERR_OK;
}

std::string connect_failure(const std::string& uri, const std::string& message) {
  std::string lower = message;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  const std::string virsh = "`virsh -c " + harness::text::shell_quote(uri) + " list`";
  std::string hint;
  if (lower.find("host key") != std::string::npos || lower.find("host identification has changed") != std::string::npos)
    hint = "host-key verification failed: ssh does not know or does not accept the hypervisor's host key. libvirt's ssh "
           "transport (qemu+ssh) checks it against ~/.ssh/known_hosts of the user running the harness, or against "
           "the UserKnownHostsFile of the program given as command=; add the host's key there after checking its "
           "fingerprint, then " + virsh + " must work";
  else
    hint = "is libvirtd, or virtqemud, running there and may this user reach it? " + virsh +
           " tells; `harness run` asks each host for its cores and memory before anything boots, so every "
           "daemon must be up to run; `harness plan` only reports a host it cannot reach";
  return "libvirt " + uri + ": cannot connect: " + message + " (" + hint + ")";
}

Conn open_connection(const std::string& uri, const std::string& shown) {
  quiet_libvirt_errors();
  Conn c(virConnectOpen(uri.c_str()));
  if (!c) throw PoolError(connect_failure(shown.empty() ? uri : shown, last_error()));
  return c;
}

std::string take_string(char* s) {
  if (!s) return {};
  std::string r(s);
  std::free(s);
  return r;
}

}  // namespace harness::pool::libvirt
