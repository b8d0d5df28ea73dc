// Guest kernel configuration check (see kernel_requirements.hpp).
#include "harness/vm/kernel_requirements.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace harness::vm {

const std::vector<KernelRequirement>& guest_kernel_requirements() {
  static const std::vector<KernelRequirement> r = {
      {"CONFIG_CGROUPS", false, {}, "cgroup v2 (bg and fg cgroups)"},
      {"CONFIG_MEMCG", false, {}, "memory controller: memory.max, memory.reclaim, memory.stat"},
      {"CONFIG_PSI", false, {}, "pressure stall information: memory.pressure, the trigger"},
      {"CONFIG_CGROUP_SCHED", false, {}, "cpu controller (the guest's /init enables +memory +cpu +io together)"},
      {"CONFIG_BLK_CGROUP", false, {}, "io controller (enabled with the others by /init)"},
      {"CONFIG_SWAP", false, {}, "swap: zram and the swapfile"},
      {"CONFIG_ZRAM", true, {"zram"}, "the zram backend"},
      {"CONFIG_ZSMALLOC", true, {"zsmalloc"}, "zram's allocator"},
      {"CONFIG_CRYPTO_LZO", true, {"lzo", "lzo_rle"}, "compressors lzo and lzo-rle (the campaigns' default)"},
      {"CONFIG_CRYPTO_LZ4", true, {"lz4"}, "compressor lz4"},
      {"CONFIG_CRYPTO_LZ4HC", true, {"lz4hc"}, "compressor lz4hc"},
      {"CONFIG_CRYPTO_ZSTD", true, {"zstd"}, "compressor zstd"},
      {"CONFIG_PCI", false, {}, "qemu's q35 machine: virtio devices are PCI devices"},
      {"CONFIG_VIRTIO_PCI", true, {"virtio_pci"}, "virtio over PCI"},
      {"CONFIG_VIRTIO_BLK", true, {"virtio_blk"}, "the data disk (swapfile, canary DB, case output)"},
      {"CONFIG_VIRTIO_NET", true, {"virtio_net"}, "the agent's network"},
      {"CONFIG_NET", false, {}, "the agent's network"},
      {"CONFIG_INET", false, {}, "TCP for the agent"},
      {"CONFIG_EXT4_FS", false, {}, "the data disk's file system (the image loads no ext4 module)"},
      {"CONFIG_BLK_DEV_INITRD", false, {}, "the initramfs the image boots"},
      {"CONFIG_RD_GZIP", false, {}, "the initramfs is gzip-compressed"},
      {"CONFIG_DEVTMPFS", false, {}, "/dev in the initramfs"},
      {"CONFIG_SERIAL_8250_CONSOLE", false, {}, "console=ttyS0: the harness reads the guest's serial console"},
  };
  return r;
}

namespace {

/// (major, minor) of "6.1.0-57-cloud-amd64"; nullopt when it does not start with N.N.
std::optional<std::pair<int, int>> major_minor(const std::string& release) {
  int major = 0, minor = 0;
  char dot = 0;
  std::istringstream in(release);
  if (!(in >> major >> dot >> minor) || dot != '.') return std::nullopt;
  return std::make_pair(major, minor);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot read");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

KernelConfigCheck check_kernel_config(const harness::kernel::KernelConfig& cfg, const std::string& release) {
  KernelConfigCheck out;
  out.config_path = cfg.source;
  for (const auto& r : guest_kernel_requirements()) {
    const auto v = cfg.get(r.option);
    const std::string found = v ? *v : "absent";
    const bool y = v && *v == "y";
    const bool m = v && *v == "m";
    if (y || (m && r.module_ok)) {
      if (y)
        for (const auto& mod : r.modules) out.builtin_modules.push_back(mod);
      continue;
    }
    out.problems.push_back(r.option + "=" + found + ": needs " + (r.module_ok ? "y or m" : "y") + " (" + r.why + ")");
  }
  if (const auto v = cfg.get("CONFIG_PSI_DEFAULT_DISABLED"); v && *v == "y")
    out.problems.push_back(
        "CONFIG_PSI_DEFAULT_DISABLED=y: needs n (PSI is then off unless psi=1 is on the kernel command line, which "
        "the image does not set)");
  const auto mm = major_minor(release);
  if (!mm)
    out.problems.push_back("kernel release '" + release + "': cannot read its version (expected N.N...)");
  else if (*mm < std::make_pair(5, 19))
    out.problems.push_back("kernel release " + release + ": needs 5.19 or later (cgroup v2 memory.reclaim)");
  return out;
}

std::optional<std::string> find_kernel_config(const std::string& vmlinuz, const std::string& modules_dir,
                                              const std::string& release, const std::string& explicit_config,
                                              std::vector<std::string>* looked) {
  if (!explicit_config.empty()) {
    if (!fs::is_regular_file(explicit_config))
      throw std::runtime_error("--kernel-config: no such file: " + explicit_config);
    return explicit_config;
  }
  const fs::path k = fs::absolute(vmlinuz);
  std::vector<fs::path> candidates = {k.parent_path() / ".config", k.parent_path() / ("config-" + release)};
  // <tree>/arch/<arch>/boot/bzImage: the tree's .config is three levels up.
  if (k.parent_path().filename() == "boot" && k.parent_path().parent_path().parent_path().filename() == "arch")
    candidates.push_back(k.parent_path().parent_path().parent_path().parent_path() / ".config");
  if (!modules_dir.empty()) {
    candidates.push_back(fs::path(modules_dir) / "build" / ".config");
    candidates.push_back(fs::path(modules_dir) / "config");
  }
  candidates.push_back(fs::path("/boot") / ("config-" + release));
  for (const auto& c : candidates) {
    if (looked) looked->push_back(c.lexically_normal().string());
    if (fs::is_regular_file(c)) return c.lexically_normal().string();
  }
  return std::nullopt;
}

KernelConfigCheck require_guest_kernel(const std::string& vmlinuz, const std::string& modules_dir,
                                       const std::string& release, const std::string& explicit_config,
                                       const std::string& what) {
  std::vector<std::string> looked;
  const auto path = find_kernel_config(vmlinuz, modules_dir, release, explicit_config, &looked);
  if (!path) {
    std::string msg = what + ": no kernel configuration found for release " + release +
                      ", so the options the harness needs (PSI, memcg, zram, compressors, virtio) cannot be "
                      "checked. Looked for:";
    for (const auto& l : looked) msg += "\n  " + l;
    msg += "\nGive the .config the kernel was built with: --kernel-config FILE";
    throw std::runtime_error(msg);
  }
  harness::kernel::KernelConfig cfg;
  try {
    cfg = harness::kernel::parse_kernel_config(read_text(*path), *path);
  } catch (const std::exception& e) {
    throw std::runtime_error(what + ": kernel configuration " + *path + ": " + e.what());
  }
  auto check = check_kernel_config(cfg, release);
  if (!check.ok()) {
    std::string msg = what + ": the kernel (release " + release + ", configuration " + *path +
                      ") lacks what the harness needs:";
    for (const auto& p : check.problems) msg += "\n  " + p;
    msg += "\nRebuild it with these options (docs/CI.md \"The kernel configuration a candidate kernel needs\").";
    throw std::runtime_error(msg);
  }
  return check;
}

}  // namespace harness::vm
