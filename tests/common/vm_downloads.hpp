#pragma once
// What every guest test's image cache would otherwise make the same way, kept once per build
// tree under <build>/vm-downloads/: the Debian kernel package (`<cache>/kernels/`, apt-get
// download + dpkg -x, about 130 MB), the canary DB (`<cache>/canary-db/`, `canary-sqlite
// prepare` with the study's defaults, about 160 MB) and the default image (`<cache>/image/`,
// about 270 MB). `harness vm image` builds a linked image where the link points and keeps it
// while its inputs (this build's binaries, the kernel package, busybox) are unchanged, so the
// suite builds it once and every test still boots this build's binaries. Each test keeps its
// own fleet (`<cache>/vms/`). Two guest tests may run at once (test.sh's two lanes): `harness vm
// image` builds each of these under a lock (harness/vm/paths.hpp CacheLock), so the second
// waits and then finds it built. Needs HARNESS_BINARY_DIR. Include as "tests/common/vm_downloads.hpp".
#include <filesystem>
#include <string>

namespace test_support {

/// Makes `cache_root`/kernels, /canary-db and /image links to <build>/vm-downloads/kernels,
/// .../canary-db and .../`image` (default "image"; the tests whose guest runs the whole CLI
/// share "image-with-cli", built with `harness vm image --with-cli`). A real folder left there
/// by an earlier run is replaced by the link; an existing link is kept. Throws
/// std::filesystem::filesystem_error when the links cannot be made.
inline void share_vm_downloads(const std::string& cache_root, const std::string& image = "image") {
  namespace fs = std::filesystem;
  const fs::path shared = fs::path(HARNESS_BINARY_DIR) / "vm-downloads";
  fs::create_directories(cache_root);
  fs::create_directories(shared);
  for (const std::string sub : {"kernels", "canary-db", "image"}) {
    const fs::path link = fs::path(cache_root) / sub;
    const fs::path target = shared / (sub == "image" ? image : sub);
    if (sub != "image") fs::create_directories(target);  // the image: built there
    if (fs::is_symlink(link)) continue;
    fs::remove_all(link);
    fs::create_directory_symlink(target, link);
  }
}

}  // namespace test_support
