#pragma once
// The guest's virtio data disk: an ext4 image built on the host with `mkfs.ext4 -d`
// (no mount needed) and edited / read back with `debugfs` (docs/DESIGN.md "Local VMs").
// Holds the canary SQLite DB, the agent token, the swapfile (created in the guest) and
// case output. Paths inside the image are absolute from the image root ("/token").
#include <cstdint>
#include <string>

namespace harness::vm {

/// Creates `image` as a sparse file of `size_mib` MiB and formats it ext4, populated
/// from `staging_dir` (may be empty = empty filesystem). Throws std::runtime_error with
/// mkfs.ext4's message.
void make_ext4(const std::string& image, int size_mib, const std::string& staging_dir);

/// Sparse copy of a disk image (cp --sparse=always): a fresh per-guest disk.
void copy_disk(const std::string& from, const std::string& to);

/// Writes host file `host_file` into the image at `guest_path` (parent directories are
/// created), owner root, permission bits `mode` (e.g. 0600). Replaces an existing file.
void disk_write(const std::string& image, const std::string& host_file,
                const std::string& guest_path, unsigned mode);

/// Copies directory `guest_dir` of the image to `host_dir` (debugfs rdump; host_dir is
/// created and receives a subdirectory named like guest_dir's last component).
void disk_rdump(const std::string& image, const std::string& guest_dir, const std::string& host_dir);

/// Contents of a file in the image; throws std::runtime_error when it does not exist.
std::string disk_cat(const std::string& image, const std::string& guest_path);

/// Byte offset in `image` of the first data block of file `guest_path` (debugfs bmap times
/// the block size): where a file's bytes can be rewritten in place without debugfs, e.g. in
/// a copy of the image on another machine. Throws std::runtime_error when the file does not
/// exist or has no data block (empty, or inline data).
std::uint64_t disk_file_offset(const std::string& image, const std::string& guest_path);

/// True when `guest_path` exists in the image.
bool disk_exists(const std::string& image, const std::string& guest_path);

}  // namespace harness::vm
