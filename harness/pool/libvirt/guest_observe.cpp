// A guest's console and liveness: the console copied from the storage pool (its tail, the
// evidence kept per boot: console.log, domain.xml) and the domain's state (libvirt_pool_impl.hpp).
#include "harness/pool/libvirt/libvirt_pool_impl.hpp"

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace harness::pool::libvirt {

namespace {

constexpr std::uint64_t kConsoleCopyBytes = 16ull << 20;  // a console longer than this keeps its tail

void write_text(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

std::string tail_of(const std::string& s, std::size_t n) { return s.size() > n ? s.substr(s.size() - n) : s; }

}  // namespace

std::string LibvirtPool::Impl::save_console(GuestState& g) {
  HostState& h = *hosts[g.host];
  if (!h.pool) return "";
  virStoragePoolRefresh(h.pool.get(), 0);
  Volume v = find_volume(h.pool.get(), console_volume(g));
  if (!v) return "";
  std::string text = io().read_tail(h.conn.get(), v.get(), kConsoleCopyBytes);
  if (!g.log_dir.empty()) write_text(fs::path(g.log_dir) / "console.log", text);
  return text;
}

std::string LibvirtPool::Impl::console_tail(GuestState& g, std::size_t n) {
  try {
    return tail_of(save_console(g), n);
  } catch (const std::exception& e) {
    return std::string("console unavailable: ") + e.what();
  }
}

void LibvirtPool::Impl::keep_evidence(GuestState& g) {
  try {
    save_console(g);
    HostState& h = *hosts[g.host];
    if (Domain d{virDomainLookupByName(h.conn.get(), g.domain.c_str())})
      if (!g.log_dir.empty()) write_text(fs::path(g.log_dir) / "domain.xml", take_string(virDomainGetXMLDesc(d.get(), 0)));
  } catch (const std::exception& e) {
    std::fprintf(out, "%s: console copy failed: %s\n", g.name.c_str(), e.what());
  }
}

Liveness LibvirtPool::Impl::liveness(GuestState& g) noexcept {
  try {
    HostState& h = connect(g.host);
    Domain d(virDomainLookupByName(h.conn.get(), g.domain.c_str()));
    if (!d) return last_error_code() == VIR_ERR_NO_DOMAIN ? Liveness::Gone : Liveness::Unknown;
    int state = 0, reason = 0;
    if (virDomainGetState(d.get(), &state, &reason, 0) != 0)
      return last_error_code() == VIR_ERR_NO_DOMAIN ? Liveness::Gone : Liveness::Unknown;
    switch (state) {
      case VIR_DOMAIN_RUNNING:
      case VIR_DOMAIN_BLOCKED:
      case VIR_DOMAIN_PAUSED:
      case VIR_DOMAIN_PMSUSPENDED:
        return Liveness::Running;
      case VIR_DOMAIN_SHUTOFF:
      case VIR_DOMAIN_CRASHED:
        return Liveness::Gone;
      default:
        return Liveness::Unknown;
    }
  } catch (const std::exception&) {
    return Liveness::Unknown;
  }
}

std::string LibvirtPool::Impl::diagnose(GuestState& g, std::size_t max_bytes) noexcept {
  try {
    connect(g.host);
    return tail_of(save_console(g), max_bytes);
  } catch (const std::exception& e) {
    return std::string("console unavailable: ") + e.what();
  }
}

}  // namespace harness::pool::libvirt
