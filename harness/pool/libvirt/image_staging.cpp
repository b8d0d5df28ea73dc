// Staging a guest image on a hypervisor (image_staging.hpp).
#include "harness/pool/libvirt/image_staging.hpp"

#include "harness/digest/sha256.hpp"
#include "harness/pool/pool.hpp"
#include "harness/vm/data_disk.hpp"
#include "harness/vm/init_script.hpp"
#include "harness/vm/paths.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <regex>
#include <stdexcept>

namespace fs = std::filesystem;

namespace harness::pool::libvirt {

std::string image_volume_prefix(const std::string& image_sha256) {
  return image_sha256.empty() ? "rh-" : "rh-" + image_sha256.substr(0, 16) + "-";
}

namespace {

std::string key12(const std::string& s) { return harness::digest::sha256_hex(s).substr(0, 12); }

const std::regex& claim_re() {
  static const std::regex re("rh-([0-9a-f]{16})-by-([0-9a-f]{12})-([0-9a-f]{12})");
  return re;
}

std::vector<std::string> volume_names(virStoragePoolPtr pool) {
  virStoragePoolRefresh(pool, 0);
  virStorageVolPtr* vols = nullptr;
  const int n = virStoragePoolListAllVolumes(pool, &vols, 0);
  if (n < 0)
    throw PoolError("cannot list the volumes of storage pool " + std::string(virStoragePoolGetName(pool)) + ": " +
                    last_error());
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) {
    Volume v(vols[i]);
    names.push_back(virStorageVolGetName(v.get()));
  }
  std::free(vols);
  return names;
}

}  // namespace

std::string claim_volume_name(const std::string& image_sha256, const std::string& campaign, const std::string& db) {
  return image_volume_prefix(image_sha256) + "by-" + key12(campaign) + "-" + key12(db);
}

void claim_image(virStoragePoolPtr pool, const std::string& image_sha256, const std::string& campaign,
                 const std::string& db) {
  const std::string name = claim_volume_name(image_sha256, campaign, db);
  if (find_volume(pool, name)) return;
  const std::string xml = "<volume><name>" + name +
                          "</name><capacity unit='bytes'>0</capacity><target><format type='raw'/></target></volume>";
  Volume v(virStorageVolCreateXML(pool, xml.c_str(), 0));
  if (!v && !find_volume(pool, name))  // another runner may have made it meanwhile
    throw PoolError("cannot create volume " + name + " in storage pool " + virStoragePoolGetName(pool) + ": " + last_error());
}

ReleasedImages release_images(virStoragePoolPtr pool, const std::string& campaign, const std::string& db) {
  ReleasedImages r;
  const std::string ck = key12(campaign), dk = db.empty() ? "" : key12(db);
  std::set<std::string> released;  // image16 of the claims deleted
  for (const auto& name : volume_names(pool)) {
    std::smatch m;
    if (!std::regex_match(name, m, claim_re()) || m[2].str() != ck || (!dk.empty() && m[3].str() != dk)) continue;
    delete_volume(pool, name);
    r.deleted.push_back(name);
    released.insert(m[1].str());
  }
  std::map<std::string, int> claims_left;
  const auto names = volume_names(pool);
  for (const auto& name : names) {
    std::smatch m;
    if (std::regex_match(name, m, claim_re())) ++claims_left[m[1].str()];
  }
  for (const auto& image16 : released) {
    if (claims_left.count(image16)) {
      r.kept.push_back("rh-" + image16 + " (" + std::to_string(claims_left[image16]) + " other claim(s))");
      continue;
    }
    for (const auto& name : names)
      if (name.rfind("rh-" + image16 + "-", 0) == 0) {
        delete_volume(pool, name);
        r.deleted.push_back(name);
      }
  }
  return r;
}

SlottedDisk slotted_disk(const harness::vm::Image& img, const std::string& cache_root) {
  static std::mutex mu;  // one local build at a time in this process
  std::lock_guard<std::mutex> lock(mu);
  if (img.sha256.size() < 16) throw std::runtime_error("image " + img.dir + " has no content hash in manifest.json");
  const fs::path dir = fs::path(cache_root) / "libvirt" / "images" / img.sha256.substr(0, 16);
  const fs::path disk = dir / "disk-base.img", offset_file = dir / "token-offset";
  if (fs::exists(disk) && fs::exists(offset_file))
    return {disk.string(), std::stoull(harness::vm::read_file(offset_file.string()))};
  fs::create_directories(dir);
  const std::string tmp = (dir / ("disk-base.img.tmp." + std::to_string(::getpid()))).string();
  harness::vm::copy_disk(img.disk_base, tmp);
  const std::string placeholder = (dir / ("token-placeholder." + std::to_string(::getpid()))).string();
  harness::vm::write_file(placeholder, std::string(kTokenFileBytes - 1, '0') + "\n", 0600);
  const std::string token_path = harness::vm::disk_path_of(harness::vm::guest::kTokenFile);
  harness::vm::disk_write(tmp, placeholder, token_path, 0600);
  fs::remove(placeholder);
  const std::uint64_t off = harness::vm::disk_file_offset(tmp, token_path);
  fs::rename(tmp, disk);
  harness::vm::write_file(offset_file.string(), std::to_string(off) + "\n");
  return {disk.string(), off};
}

StagedImage stage_image(virConnectPtr conn, virStoragePoolPtr pool, VolumeIo& io, const harness::vm::Image& img,
                        const std::string& cache_root) {
  if (img.sha256.size() < 16) throw PoolError("image " + img.dir + " has no content hash in manifest.json");
  StagedImage s;
  s.sha256 = img.sha256;
  const std::string prefix = image_volume_prefix(img.sha256);
  bool up = false;
  s.kernel = volume_path(stage_file(conn, pool, io, prefix + "vmlinuz", img.vmlinuz, &up).get());
  if (up) s.uploaded.push_back(prefix + "vmlinuz");
  s.initrd = volume_path(stage_file(conn, pool, io, prefix + "initramfs.cpio.gz", img.initramfs, &up).get());
  if (up) s.uploaded.push_back(prefix + "initramfs.cpio.gz");

  // The slotted disk: already there under any offset, or built here and uploaded.
  virStorageVolPtr* vols = nullptr;
  const int n = virStoragePoolListAllVolumes(pool, &vols, 0);
  if (n < 0) throw PoolError("cannot list the volumes of storage pool " + std::string(virStoragePoolGetName(pool)) + ": " + last_error());
  const std::regex re(prefix + "disk-t([0-9]+)\\.img");
  for (int i = 0; i < n; ++i) {
    Volume v(vols[i]);
    std::smatch m;
    const std::string name = virStorageVolGetName(v.get());
    if (s.disk_volume.empty() && std::regex_match(name, m, re)) {
      s.disk_volume = name;
      s.token_offset = std::stoull(m[1].str());
    }
  }
  std::free(vols);
  if (s.disk_volume.empty()) {
    const SlottedDisk d = slotted_disk(img, cache_root);
    s.disk_volume = prefix + "disk-t" + std::to_string(d.token_offset) + ".img";
    s.token_offset = d.token_offset;
    stage_file(conn, pool, io, s.disk_volume, d.path, &up);
    if (up) s.uploaded.push_back(s.disk_volume);
  }
  return s;
}

}  // namespace harness::pool::libvirt
