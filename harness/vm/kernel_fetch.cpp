// Debian cloud kernel fetch + cache (see kernel_fetch.hpp).
#include "harness/vm/kernel_fetch.hpp"
#include "harness/vm/paths.hpp"

#include "harness/vm/subprocess.hpp"

#include <filesystem>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace harness::vm {

std::string resolve_kernel_package(const std::string& meta) {
  std::string out = run_checked({"apt-cache", "depends", meta});
  std::stringstream ss(out);
  std::string line;
  while (std::getline(ss, line)) {
    auto p = line.find("Depends: ");
    if (p == std::string::npos) continue;
    std::string dep = line.substr(p + 9);
    while (!dep.empty() && (dep.back() == ' ' || dep.back() == '\r')) dep.pop_back();
    if (dep.rfind("linux-image-", 0) == 0) return dep;
  }
  throw std::runtime_error("apt-cache depends " + meta +
                           " lists no linux-image-* dependency; give --kernel and --modules");
}

static GuestKernel kernel_from_root(const fs::path& root, const std::string& package) {
  GuestKernel k;
  k.package = package;
  for (const auto& e : fs::directory_iterator(root / "boot")) {
    std::string n = e.path().filename().string();
    if (n.rfind("vmlinuz-", 0) == 0) {
      k.vmlinuz = e.path().string();
      k.release = n.substr(8);
    }
  }
  if (k.vmlinuz.empty()) throw std::runtime_error("no boot/vmlinuz-* in " + root.string());
  k.modules_dir = (root / "lib/modules" / k.release).string();
  if (!fs::is_directory(k.modules_dir))
    throw std::runtime_error("no modules tree " + k.modules_dir);
  return k;
}

GuestKernel fetch_debian_kernel(const std::string& cache_dir, const std::string& package) {
  fs::path dir = fs::path(cache_dir) / "kernels" / package;
  fs::path root = dir / "root";
  if (fs::exists(dir / ".complete")) return kernel_from_root(root, package);
  const CacheLock lock((fs::path(cache_dir) / "kernels" / ".lock").string(), "kernel package " + package);
  if (fs::exists(dir / ".complete")) return kernel_from_root(root, package);  // built while we waited
  fs::remove_all(dir);
  fs::create_directories(dir);
  run_checked({"apt-get", "download", package}, dir.string());
  std::string deb;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".deb") deb = e.path().string();
  if (deb.empty()) throw std::runtime_error("apt-get download " + package + " produced no .deb");
  run_checked({"dpkg", "-x", deb, root.string()});
  GuestKernel k = kernel_from_root(root, package);
  run_checked({"touch", (dir / ".complete").string()});
  return k;
}

GuestKernel user_kernel(const std::string& vmlinuz, const std::string& modules_dir) {
  if (!fs::is_regular_file(vmlinuz)) throw std::runtime_error("--kernel: no such file: " + vmlinuz);
  if (!fs::is_directory(modules_dir))
    throw std::runtime_error("--modules: no such directory: " + modules_dir);
  GuestKernel k;
  k.vmlinuz = fs::absolute(vmlinuz).string();
  k.modules_dir = fs::absolute(modules_dir).string();
  k.release = fs::path(k.modules_dir).filename().string();
  return k;
}

}  // namespace harness::vm
