#pragma once
// The guest kernel: the Debian cloud kernel package, fetched with `apt-get download` and
// unpacked with `dpkg -x` into the per-user cache (docs/DESIGN.md "Local VMs"), or a kernel and
// modules tree given by the user.
#include <string>

namespace harness::vm {

/// A kernel image and its modules tree (lib/modules/<release>).
struct GuestKernel {
  std::string vmlinuz;      ///< path of the bzImage
  std::string modules_dir;  ///< path of lib/modules/<release> (contains kernel/ and modules.builtin)
  std::string release;      ///< e.g. 6.1.0-57-cloud-amd64 (modules_dir's name)
  std::string package;      ///< Debian package it came from, "" when user-supplied
};

/// Resolves the versioned package behind the metapackage `meta` (default
/// linux-image-cloud-amd64) from `apt-cache depends` (first "Depends: linux-image-*").
/// Throws std::runtime_error when apt-cache fails or lists no such dependency.
std::string resolve_kernel_package(const std::string& meta = "linux-image-cloud-amd64");

/// Ensures `package` is downloaded and unpacked under `cache_dir`/kernels/<package>/
/// (apt-get download + dpkg -x; skipped when already unpacked), and returns its kernel.
/// Throws std::runtime_error naming the failing command or the missing file.
GuestKernel fetch_debian_kernel(const std::string& cache_dir, const std::string& package);

/// A user-supplied kernel: `vmlinuz` file and `modules_dir` (lib/modules/<release>).
/// Throws std::runtime_error naming the flag (--kernel / --modules) when a path is missing.
GuestKernel user_kernel(const std::string& vmlinuz, const std::string& modules_dir);

}  // namespace harness::vm
