#pragma once
// The harness's volumes on a hypervisor, through the libvirt storage API only (the runner
// never writes a hypervisor's files itself, so remote hosts work as local ones).
//
// One storage pool of the harness's per hypervisor (type dir; created, built and set to
// autostart when missing). In it:
//   rh-<image16>-vmlinuz, rh-<image16>-initramfs.cpio.gz   the image's kernel and initramfs
//   rh-<image16>-disk-t<OFFSET>.img                        its base data disk with a token slot
//   <domain>-disk.img, <domain>-console.log                a guest's data disk and console
// <image16> is the first 16 hex digits of the image's content hash (manifest.json sha256),
// so an unchanged image is uploaded once per hypervisor and reused by every later campaign;
// an upload goes to "<name>.part" and is cloned to its name only when complete, so a killed
// upload is never taken for an image.
#include "harness/pool/libvirt/virt.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace harness::pool::libvirt {

/// Moves bytes into and out of volumes (libvirt streams). An interface so that unit tests
/// against libvirt's test driver, which has no volume upload or download, can count the
/// transfers instead.
class VolumeIo {
 public:
  virtual ~VolumeIo() = default;
  /// Uploads the whole local file `file` into `vol` (holes are sent as holes).
  virtual void upload_file(virConnectPtr conn, virStorageVolPtr vol, const std::string& file) = 0;
  /// Writes `data` at byte `offset` of `vol`, leaving the rest of the volume as it is.
  virtual void write_at(virConnectPtr conn, virStorageVolPtr vol, std::uint64_t offset, const std::string& data) = 0;
  /// The last `max_bytes` bytes of `vol` ("" when it is empty).
  virtual std::string read_tail(virConnectPtr conn, virStorageVolPtr vol, std::uint64_t max_bytes) = 0;
};

/// The real transfers: virStorageVolUpload (sparse stream) / virStorageVolDownload.
/// Every failure throws harness::pool::PoolError naming the volume and libvirt's message.
std::unique_ptr<VolumeIo> stream_volume_io();

/// The storage pool `name` of `conn`, started and refreshed. When it does not exist it is
/// defined as a dir pool at `path`, built (mkdir), started and set to autostart.
/// Throws PoolError naming the pool and URI.
StoragePool ensure_storage_pool(virConnectPtr conn, const std::string& name, const std::string& path);

/// The pool's target directory on the hypervisor (<target><path>). Throws PoolError.
std::string pool_path(virStoragePoolPtr pool);

/// Volume `name` of `pool`, or null when it does not exist.
Volume find_volume(virStoragePoolPtr pool, const std::string& name);

/// Deletes volume `name` when it exists. Throws PoolError when it exists and cannot be deleted.
void delete_volume(virStoragePoolPtr pool, const std::string& name);

/// Path on the hypervisor of `vol`. Throws PoolError.
std::string volume_path(virStorageVolPtr vol);

/// Size of `vol` in bytes (its capacity as libvirt reads it now). Throws PoolError.
std::uint64_t volume_size(virStorageVolPtr vol);

/// Volume `name` holding the bytes of local file `file`: the existing one when present,
/// else uploaded as "<name>.part" and cloned to `name`. Returns it; `uploaded` says whether
/// bytes were sent. Throws PoolError.
Volume stage_file(virConnectPtr conn, virStoragePoolPtr pool, VolumeIo& io, const std::string& name,
                  const std::string& file, bool* uploaded = nullptr);

/// A new volume `name` with the contents of `from` (deleted first when it exists; a sparse
/// copy made by libvirt on the hypervisor). Throws PoolError.
Volume clone_volume(virStoragePoolPtr pool, virStorageVolPtr from, const std::string& name);

}  // namespace harness::pool::libvirt
