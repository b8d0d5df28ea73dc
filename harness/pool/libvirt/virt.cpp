// libvirt handles and errors (virt.hpp).
#include "harness/pool/libvirt/virt.hpp"

#include "harness/pool/pool.hpp"

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

Conn open_connection(const std::string& uri) {
  quiet_libvirt_errors();
  Conn c(virConnectOpen(uri.c_str()));
  if (!c)
    throw PoolError("libvirt " + uri + ": cannot connect: " + last_error() +
                    " (is libvirtd, or virtqemud, running there and may this user reach it? `virsh -c " + uri +
                    " list` tells; `harness run` asks each host for its cores and memory before anything boots, so "
                    "every daemon must be up to run; `harness plan` only reports a host it cannot reach)");
  return c;
}

std::string take_string(char* s) {
  if (!s) return {};
  std::string r(s);
  std::free(s);
  return r;
}

}  // namespace harness::pool::libvirt
