// `vm down` for libvirt hosts: libvirt_down (libvirt_pool.hpp).
#include "harness/pool/libvirt/deadline.hpp"
#include "harness/pool/libvirt/domain_xml.hpp"
#include "harness/pool/libvirt/image_staging.hpp"
#include "harness/pool/libvirt/libvirt_pool.hpp"
#include "harness/pool/libvirt/storage.hpp"
#include "harness/pool/libvirt/virt.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>

namespace harness::pool::libvirt {

std::vector<std::string> libvirt_down(const LibvirtConfig& cfg, const std::string& campaign, const std::string& db,
                                      bool images, std::FILE* out) {
  const std::string want_db = db.empty() ? "" : std::filesystem::absolute(db).lexically_normal().string();
  std::vector<std::string> destroyed;
  for (const auto& h : cfg.hosts) {
    Conn conn = open_connection(deadline_uri(cfg, h.uri), h.uri.text);  // ssh: ConnectTimeout
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
      const ReleasedImages r = release_images(pool.get(), campaign, want_db);
      for (const auto& v : r.deleted) std::fprintf(out, "libvirt %s: deleted volume %s\n", h.uri.text.c_str(), v.c_str());
      for (const auto& k : r.kept)
        std::fprintf(out, "libvirt %s: kept image %s: another campaign or DB claims it\n", h.uri.text.c_str(), k.c_str());
      if (r.deleted.empty() && r.kept.empty())
        std::fprintf(out, "libvirt %s: no image volume of campaign %s in storage pool %s\n", h.uri.text.c_str(),
                     campaign.c_str(), cfg.storage_pool.c_str());
    }
  }
  return destroyed;
}

void libvirt_purge(const LibvirtConfig& cfg, const std::string& cache_root, std::FILE* out) {
  std::vector<std::string> running;
  for (const auto& h : cfg.hosts) {  // refuse before removing anything anywhere
    Conn conn = open_connection(deadline_uri(cfg, h.uri), h.uri.text);  // ssh: ConnectTimeout
    virDomainPtr* doms = nullptr;
    const int n = virConnectListAllDomains(conn.get(), &doms, VIR_CONNECT_LIST_DOMAINS_ACTIVE);
    if (n < 0) throw PoolError("cannot list the domains of " + h.uri.text + ": " + last_error());
    std::vector<Domain> all;
    for (int k = 0; k < n; ++k) all.emplace_back(doms[k]);
    std::free(doms);
    for (auto& d : all) {
      const auto o = parse_owner_xml(take_string(virDomainGetMetadata(d.get(), VIR_DOMAIN_METADATA_ELEMENT, kOwnerNamespace, 0)));
      if (o)
        running.push_back(std::string(virDomainGetName(d.get())) + " on " + h.uri.text + " (campaign " + o->campaign +
                          ", DB " + o->db + ")");
    }
  }
  if (!running.empty()) {
    std::string list;
    for (const auto& r : running) list += "\n  " + r;
    throw PoolError("purge refused: harness domains still run on the provider's hosts and use storage pool " +
                    cfg.storage_pool + " (stop them first: harness vm down --campaign FILE of their campaign):" + list);
  }
  for (const auto& h : cfg.hosts) {
    Conn conn = open_connection(deadline_uri(cfg, h.uri), h.uri.text);  // ssh: ConnectTimeout
    StoragePool pool(virStoragePoolLookupByName(conn.get(), cfg.storage_pool.c_str()));
    if (!pool) {
      std::fprintf(out, "libvirt %s: no storage pool %s\n", h.uri.text.c_str(), cfg.storage_pool.c_str());
      continue;
    }
    std::string dir;
    try {
      dir = pool_path(pool.get());
    } catch (const PoolError&) {
      // the directory is only named in the message below; the pool is removed either way
    }
    if (virStoragePoolIsActive(pool.get()) != 1 && virStoragePoolCreate(pool.get(), 0) != 0)
      throw PoolError("cannot start storage pool " + cfg.storage_pool + " on " + h.uri.text + " to empty it: " + last_error());
    virStoragePoolRefresh(pool.get(), 0);
    virStorageVolPtr* vols = nullptr;
    const int nv = virStoragePoolListAllVolumes(pool.get(), &vols, 0);
    if (nv < 0) throw PoolError("cannot list the volumes of storage pool " + cfg.storage_pool + " on " + h.uri.text + ": " + last_error());
    std::vector<Volume> vs;
    for (int k = 0; k < nv; ++k) vs.emplace_back(vols[k]);
    std::free(vols);
    for (auto& v : vs)
      if (virStorageVolDelete(v.get(), 0) != 0)
        throw PoolError("cannot delete volume " + std::string(virStorageVolGetName(v.get())) + " on " + h.uri.text + ": " +
                        last_error());
    if (virStoragePoolDestroy(pool.get()) != 0)
      throw PoolError("cannot stop storage pool " + cfg.storage_pool + " on " + h.uri.text + ": " + last_error());
    if (virStoragePoolDelete(pool.get(), 0) != 0)
      throw PoolError("cannot remove the directory of storage pool " + cfg.storage_pool + " on " + h.uri.text + ": " +
                      last_error() + " (files the harness did not put there?)");
    if (virStoragePoolUndefine(pool.get()) != 0)
      throw PoolError("cannot undefine storage pool " + cfg.storage_pool + " on " + h.uri.text + ": " + last_error());
    std::fprintf(out, "libvirt %s: removed storage pool %s (%d volume(s)%s)\n", h.uri.text.c_str(), cfg.storage_pool.c_str(),
                 nv, dir.empty() ? "" : (", directory " + dir).c_str());
  }
  const std::filesystem::path images = std::filesystem::path(cache_root) / "libvirt" / "images";
  std::error_code ec;
  if (std::filesystem::exists(images, ec)) {
    const auto n = std::filesystem::remove_all(images, ec);
    if (ec) throw PoolError("cannot remove " + images.string() + ": " + ec.message());
    std::fprintf(out, "removed %s (the slotted base disks, %ju file(s))\n", images.string().c_str(), static_cast<std::uintmax_t>(n));
  }
}

}  // namespace harness::pool::libvirt
