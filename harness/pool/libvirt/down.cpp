// `vm down` for libvirt hosts: libvirt_down (libvirt_pool.hpp).
#include "harness/pool/libvirt/domain_xml.hpp"
#include "harness/pool/libvirt/image_staging.hpp"
#include "harness/pool/libvirt/libvirt_pool.hpp"
#include "harness/pool/libvirt/storage.hpp"
#include "harness/pool/libvirt/virt.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace harness::pool::libvirt {

std::vector<std::string> libvirt_down(const LibvirtConfig& cfg, const std::string& campaign, const std::string& db,
                                      bool images, std::FILE* out) {
  const std::string want_db = db.empty() ? "" : std::filesystem::absolute(db).lexically_normal().string();
  std::vector<std::string> destroyed;
  for (const auto& h : cfg.hosts) {
    Conn conn = open_connection(h.uri.text);
    StoragePool pool(virStoragePoolLookupByName(conn.get(), cfg.storage_pool.c_str()));
    virDomainPtr* doms = nullptr;
    const int n = virConnectListAllDomains(conn.get(), &doms, 0);
    if (n < 0) throw PoolError("cannot list the domains of " + h.uri.text + ": " + last_error());
    std::vector<Domain> all;
    for (int k = 0; k < n; ++k) all.emplace_back(doms[k]);
    std::free(doms);
    std::sort(all.begin(), all.end(), [](const Domain& a, const Domain& b) {
      return std::string(virDomainGetName(a.get())) < virDomainGetName(b.get());
    });
    for (auto& d : all) {
      const std::string name = virDomainGetName(d.get());
      if (name.rfind(cfg.name_prefix, 0) != 0) continue;
      const auto o = parse_owner_xml(take_string(virDomainGetMetadata(d.get(), VIR_DOMAIN_METADATA_ELEMENT, kOwnerNamespace, 0)));
      if (!o) continue;  // not the harness's
      if (!campaign.empty() && o->campaign != campaign) continue;
      if (!want_db.empty() && o->db != want_db) continue;
      if (virDomainIsActive(d.get()) == 1 && virDomainDestroy(d.get()) != 0)
        throw PoolError("cannot destroy domain " + name + " on " + h.uri.text + ": " + last_error());
      if (virDomainIsPersistent(d.get()) == 1) virDomainUndefine(d.get());
      if (pool) {
        delete_volume(pool.get(), name + "-disk.img");
        delete_volume(pool.get(), name + "-console.log");
      }
      std::fprintf(out, "libvirt %s: destroyed %s (campaign %s, guest %s)\n", h.uri.text.c_str(), name.c_str(),
                   o->campaign.c_str(), o->guest.c_str());
      destroyed.push_back(name + " on " + h.uri.text);
    }
    if (images && pool) {
      virStoragePoolRefresh(pool.get(), 0);
      virStorageVolPtr* vols = nullptr;
      const int nv = virStoragePoolListAllVolumes(pool.get(), &vols, 0);
      std::vector<Volume> vs;
      for (int k = 0; k < nv; ++k) vs.emplace_back(vols[k]);
      std::free(vols);
      for (auto& v : vs) {
        const std::string vn = virStorageVolGetName(v.get());
        if (vn.rfind(image_volume_prefix(), 0) != 0) continue;
        if (virStorageVolDelete(v.get(), 0) != 0)
          throw PoolError("cannot delete volume " + vn + " on " + h.uri.text + ": " + last_error());
        std::fprintf(out, "libvirt %s: deleted image volume %s\n", h.uri.text.c_str(), vn.c_str());
      }
    }
  }
  return destroyed;
}

}  // namespace harness::pool::libvirt
