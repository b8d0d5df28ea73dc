#pragma once
// Putting a harness guest image on a hypervisor (ours; storage.hpp names the volumes).
//
// The agent token differs per guest and per campaign, but the data disk must not be
// uploaded per guest: so the base disk that is uploaded (once per image and hypervisor)
// already holds /token (0600) with a placeholder of the token's exact length, and its byte
// offset in the disk is part of the volume's name (rh-<image16>-disk-t<OFFSET>.img). Each
// boot clones that volume on the hypervisor and overwrites those bytes with the guest's
// token (virStorageVolUpload at the offset): no debugfs, no file access on the hypervisor.
#include "harness/pool/libvirt/storage.hpp"
#include "harness/vm/image.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace harness::pool::libvirt {

/// Length of the token file: harness::agent::random_token() (64 hex digits) and a newline.
inline constexpr std::size_t kTokenFileBytes = 65;

/// A local copy of `img`'s base disk with the placeholder token, and the token's offset.
struct SlottedDisk {
  std::string path;
  std::uint64_t token_offset = 0;
};

/// Builds (once; reused while it exists) <cache>/libvirt/images/<image16>/disk-base.img.
/// Throws std::runtime_error naming the step (copy, debugfs) that failed.
SlottedDisk slotted_disk(const harness::vm::Image& img, const std::string& cache_root);

/// An image on one hypervisor: paths there and the disk volume to clone per boot.
struct StagedImage {
  std::string sha256;                 ///< the image's content hash
  std::string kernel, initrd;         ///< hypervisor paths
  std::string disk_volume;            ///< volume name of the slotted base disk
  std::uint64_t token_offset = 0;
  std::vector<std::string> uploaded;  ///< volume names this call uploaded (empty: all present)
};

/// Volume name prefix of every image volume ("rh-"), and of one image ("rh-<image16>-").
std::string image_volume_prefix(const std::string& image_sha256 = "");

/// The claim of one campaign and DB on an image in a storage pool: an empty volume
/// rh-<image16>-by-<campaign12>-<db12>, the 12 first hex digits of the SHA-256 of the
/// campaign name and of the DB path (absolute, normal). Image volumes are shared by every
/// campaign that boots the same image (uploaded once); the claims say which campaigns use
/// them, so that `vm down --images` of one campaign deletes an image only when no other
/// campaign claims it.
std::string claim_volume_name(const std::string& image_sha256, const std::string& campaign, const std::string& db);

/// Creates the claim of `campaign` and `db` on `image_sha256` in `pool` when missing. Throws PoolError.
void claim_image(virStoragePoolPtr pool, const std::string& image_sha256, const std::string& campaign,
                 const std::string& db);

/// What release_images did: volume names deleted, and images kept because another
/// campaign or DB still claims them ("rh-<image16> (N other claim(s))").
struct ReleasedImages {
  std::vector<std::string> deleted;
  std::vector<std::string> kept;
};

/// Deletes the claims of `campaign` (of every DB when `db` is "", else of that DB) in
/// `pool`, then every volume rh-<image16>-* of each image it claimed that no claim is left
/// on. Images this campaign never claimed (uploaded before claims existed, or another
/// campaign's) are not touched. Throws PoolError when a volume cannot be listed or deleted.
ReleasedImages release_images(virStoragePoolPtr pool, const std::string& campaign, const std::string& db);

/// Stages `img` in `pool` (see the top of this header): finds or uploads its kernel,
/// initramfs and slotted base disk (built locally only when the hypervisor lacks it).
/// Throws PoolError (libvirt) or std::runtime_error (local build) naming the file.
StagedImage stage_image(virConnectPtr conn, virStoragePoolPtr pool, VolumeIo& io, const harness::vm::Image& img,
                        const std::string& cache_root);

}  // namespace harness::pool::libvirt
