// Guest image build: kernel, initramfs, base data disk, content hash (see image.hpp).
#include "harness/vm/image.hpp"
#include "harness/json/limited_parse.hpp"

#include "harness/vm/cpio.hpp"
#include "harness/vm/data_disk.hpp"
#include "harness/vm/extra_binaries.hpp"
#include "harness/vm/init_script.hpp"
#include "harness/vm/kernel_fetch.hpp"
#include "harness/vm/kernel_requirements.hpp"
#include "harness/vm/modinfo.hpp"
#include "harness/vm/paths.hpp"
#include "harness/digest/sha256.hpp"
#include "harness/vm/subprocess.hpp"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace harness::vm {

std::vector<std::string> wanted_modules() {
  return {"zram", "lzo", "lzo_rle", "lz4", "lz4hc", "zstd", "virtio_pci", "virtio_blk", "virtio_net"};
}

std::vector<std::pair<std::string, std::string>> find_harness_binaries(const std::string& bin_dir, bool with_cli) {
  std::vector<std::pair<std::string, std::string>> found;
  if (with_cli) found.emplace_back("harness", self_exe());
  fs::path self_dir = self_exe_dir();
  fs::path build = self_dir.parent_path().parent_path();  // <build>/harness/cli/harness
  for (const auto& name : harness_binary_names()) {
    if (name == "harness") continue;
    const char* sub = name == "pressure-gen" ? "pressure" : name.rfind("harness-", 0) == 0 ? "harness/cli" : "canaries";
    std::vector<fs::path> candidates;
    if (!bin_dir.empty()) candidates.push_back(fs::path(bin_dir) / name);
    candidates.push_back(self_dir / name);
    candidates.push_back(build / sub / name);
    for (const auto& c : candidates) {
      if (fs::is_regular_file(c)) {
        found.emplace_back(name, fs::absolute(c).string());
        break;
      }
    }
  }
  return found;
}

std::vector<std::string> shared_libraries(const std::string& binary) {
  RunResult r = run({"ldd", binary});
  std::vector<std::string> libs;
  if (r.exit_code != 0) return libs;  // "not a dynamic executable"
  std::stringstream ss(r.out);
  std::string line;
  while (std::getline(ss, line)) {
    if (line.find("not found") != std::string::npos)
      throw std::runtime_error("ldd " + binary + ": " + line);
    std::string path;
    auto arrow = line.find("=> ");
    if (arrow != std::string::npos) {
      path = line.substr(arrow + 3);
    } else {
      auto first = line.find_first_not_of(" \t");
      if (first == std::string::npos) continue;
      path = line.substr(first);
    }
    path = path.substr(0, path.find(" ("));
    if (!path.empty() && path[0] == '/') libs.push_back(path);
  }
  return libs;
}

std::string image_inputs_sha256(const ImageOptions& opts, const GuestKernel& k, const std::string& config) {
  // Each file hashed once: the builder is usually the "harness" binary put in the image too.
  std::map<std::string, std::string> done;
  const auto sha256_file = [&done](const std::string& path) {
    std::error_code ec;
    const auto real = fs::canonical(path, ec);
    const std::string key = ec ? path : real.string();
    auto it = done.find(key);
    if (it == done.end()) it = done.emplace(key, harness::digest::sha256_file(path)).first;
    return it->second;
  };
  nlohmann::json in;
  in["builder"] = sha256_file("/proc/self/exe");
  in["kernel_package"] = k.package;
  in["kernel_release"] = k.release;
  in["vmlinuz"] = sha256_file(k.vmlinuz);
  in["kernel_config"] = config.empty() ? std::string() : sha256_file(config);
  in["busybox"] = sha256_file(opts.busybox);
  std::set<std::string> libs;
  for (const auto& [name, path] : find_harness_binaries(opts.bin_dir, opts.with_cli)) {
    in["binaries"][name] = sha256_file(path);
    for (const auto& l : shared_libraries(path)) libs.insert(l);
  }
  // Only when given: an image built without --extra-binary keeps the hash it had before.
  for (const auto& b : check_extra_binaries(opts.extra_binaries)) {
    in["extra_binaries"][b.name] = sha256_file(b.path);
    for (const auto& l : shared_libraries(b.path)) libs.insert(l);
  }
  for (const auto& l : libs) in["libraries"][l] = sha256_file(l);
  in["disk_mib"] = opts.disk_mib;
  in["canary_db"] = opts.canary_db;
  if (!opts.with_cli) in["guest_cli_script"] = guest_cli_script();
  return harness::digest::sha256_hex(in.dump());
}

std::string guest_cli_script() {
  return R"SH(#!/bin/sh
# `harness` in a guest image built without --with-cli (harness/vm/image.hpp): the subcommands
# that run inside a guest, each from the binary that carries it.
case "$1" in
  case) exec harness-case "$@" ;;
  agent | qualify) exec harness-agent "$@" ;;
  *)
    echo "harness: '$1' is not in this guest image, which carries 'harness case', 'harness agent' and" \
      "'harness qualify' only (harness vm image --with-cli puts the whole CLI in)" >&2
    exit 64
    ;;
esac
)SH";
}

namespace {
void progress(const std::string& msg) { std::fprintf(stderr, "vm image: %s\n", msg.c_str()); }

std::string rel(const std::string& abs) { return abs[0] == '/' ? abs.substr(1) : abs; }

// True when `dir` holds a whole image whose manifest records `inputs`.
bool image_is_current(const fs::path& dir, const std::string& inputs) {
  for (const char* f : {"manifest.json", "vmlinuz", "initramfs.cpio.gz", "disk-base.img"})
    if (!fs::is_regular_file(dir / f)) return false;
  try {
    const auto m = harness::json::parse_file((dir / "manifest.json").string());
    return m.is_object() && m.value("inputs_sha256", std::string()) == inputs;
  } catch (const std::exception&) {
    return false;
  }
}

// Prepares (or reuses) the canary DB, cached by the prepare arguments.
std::string prepare_canary_db(const std::string& cache, const std::string& canary_sqlite) {
  std::vector<std::string> args = {"prepare"};  // defaults = the study's 80,000 x 1,536-byte rows
  std::string key = harness::digest::sha256_hex("canary-sqlite prepare (defaults)").substr(0, 16);
  fs::path dir = fs::path(cache) / "canary-db" / key;
  fs::path db = dir / "canary.db";
  if (fs::exists(dir / ".complete")) return db.string();
  const CacheLock lock((fs::path(cache) / "canary-db" / ".lock").string(), "the canary DB");
  if (fs::exists(dir / ".complete")) return db.string();  // prepared while we waited
  fs::create_directories(dir);
  fs::remove(db);
  args.insert(args.begin(), canary_sqlite);
  args.insert(args.end(), {"--db", db.string()});
  progress("preparing canary DB: " + render(args));
  run_checked(args);
  run_checked({"touch", (dir / ".complete").string()});
  return db.string();
}
}  // namespace

void require_own_image_dir(const ImageOptions& opts, const std::string& default_dir) {
  const bool other_kernel = !opts.kernel.empty() || !opts.modules.empty() || !opts.kernel_package.empty();
  if (!other_kernel || opts.as_default) return;
  const std::string flag = !opts.kernel.empty() || !opts.modules.empty() ? "--kernel" : "--kernel-package";
  const auto target = opts.out_dir.empty() ? fs::path(default_dir)
                                           : fs::absolute(fs::path(opts.out_dir)).lexically_normal();
  if (target != fs::path(default_dir).lexically_normal()) return;
  throw std::runtime_error(
      flag + " without --out would rebuild the default image " + default_dir +
      ", which every campaign boots for `baseline: {}` and for every variant without kernel.image_dir: baseline and "
      "candidate would then both run this kernel, an A/A comparison that passes whatever regressed. Build the "
      "candidate into its own directory and point the campaign at it:\n"
      "  harness vm image                       # the baseline: the default image (Debian's cloud kernel)\n"
      "  harness vm image " + flag + " ... --out images/candidate\n"
      "  # campaign: variants.candidate.kernel.image_dir: images/candidate (relative to the campaign file)\n"
      "(docs/CI.md \"What a job does\"). To make this kernel the default image on purpose, add --as-default.");
}

namespace {

/// The guest kernel of a build and its checked configuration.
struct BuildKernel {
  GuestKernel k;
  std::string what;  ///< "--kernel PATH" or "kernel package NAME" (the check's messages)
  KernelConfigCheck check;
};

/// The kernel the options name (--kernel/--modules, --kernel-package, else Debian's
/// cloud kernel), checked before anything is built: a kernel without PSI, memcg, zram or
/// virtio would boot a guest that cannot run a case (the error lists what is missing).
/// Also checks that busybox is there.
BuildKernel choose_kernel(const ImageOptions& opts, const std::string& cache) {
  BuildKernel b;
  if (!opts.kernel.empty() || !opts.modules.empty()) {
    if (opts.kernel.empty() || opts.modules.empty())
      throw std::runtime_error("--kernel and --modules must be given together");
    b.k = user_kernel(opts.kernel, opts.modules);
    b.what = "--kernel " + opts.kernel;
  } else {
    std::string pkg = opts.kernel_package.empty() ? resolve_kernel_package() : opts.kernel_package;
    progress("kernel package " + pkg);
    b.k = fetch_debian_kernel(cache, pkg);
    b.what = "kernel package " + pkg;
  }
  b.check = require_guest_kernel(b.k.vmlinuz, b.k.modules_dir, b.k.release, opts.kernel_config, b.what);
  progress("kernel " + b.k.release + ": configuration " + b.check.config_path + " has what the harness needs");
  if (!fs::is_regular_file(opts.busybox))
    throw std::runtime_error("busybox not found at " + opts.busybox + " (install busybox-static)");
  return b;
}

/// Where the image goes: --out, else the cache's image/; a symlink there is followed (a
/// shared image, e.g. one per build tree for the guest tests). Its parent is created.
fs::path target_dir(const ImageOptions& opts, const std::string& cache) {
  fs::path dir = opts.out_dir.empty() ? fs::path(cache) / "image"
                                      : fs::absolute(fs::path(opts.out_dir)).lexically_normal();
  if (fs::is_symlink(dir)) {
    const fs::path target = fs::read_symlink(dir);
    dir = (target.is_absolute() ? target : dir.parent_path() / target).lexically_normal();
  }
  if (dir.has_parent_path()) fs::create_directories(dir.parent_path());
  return dir;
}

/// The initramfs's directories, busybox and its applets, /init, the kernel config and /etc.
void add_base(CpioWriter& cpio, const ImageOptions& opts, const BuildKernel& b) {
  for (const char* d : {"dev", "proc", "sys", "tmp", "run", "root", "etc", "var/lib/harness",
                        "mnt", "bin", "sbin", "usr/bin", "usr/sbin"})
    cpio.add_dir(d);
  cpio.add_host_file("bin/busybox", opts.busybox, 0755);
  RunResult list = run({opts.busybox, "--list-full"});
  if (list.exit_code != 0) throw std::runtime_error(opts.busybox + " --list-full failed");
  std::stringstream ls(list.out);
  std::string applet;
  while (std::getline(ls, applet)) {
    if (applet.empty() || applet == "bin/busybox" || cpio.has(applet)) continue;
    cpio.add_symlink(applet, "/bin/busybox");
  }
  cpio.add_file("init", init_script(), 0755);
  // the kernel config, so that qualification can record CONFIG_PSI and friends
  cpio.add_host_file("boot/config-" + b.k.release, b.check.config_path, 0644);
  cpio.add_file("etc/hosts", "127.0.0.1 localhost\n", 0644);
  cpio.add_file("etc/passwd", "root:x:0:0:root:/root:/bin/sh\n", 0644);
  cpio.add_file("etc/group", "root:x:0:\n", 0644);
  cpio.add_file("etc/nsswitch.conf", "passwd: files\ngroup: files\nhosts: files\n", 0644);
}

/// The wanted modules in dependency order, and their list for /init (img.modules).
void add_modules(CpioWriter& cpio, const BuildKernel& b, Image& img) {
  auto index = index_modules(b.k.modules_dir);
  // built in: from modules.builtin, and from the configuration (a tree installed without it)
  auto builtin = read_builtin(b.k.modules_dir);
  builtin.insert(builtin.end(), b.check.builtin_modules.begin(), b.check.builtin_modules.end());
  auto order = module_load_order(index, wanted_modules(), builtin);
  std::string list_txt;
  for (const auto& ko : order) {
    std::string guest_path = "lib/modules/" + b.k.release + "/" + fs::relative(ko, b.k.modules_dir).string();
    cpio.add_host_file(guest_path, ko, 0644);
    list_txt += "/" + guest_path + "\n";
    img.modules.push_back("/" + guest_path);
  }
  cpio.add_file(rel(guest::kModulesList), list_txt, 0644);
}

/// The harness binaries (stripped of debug info), --extra-binary files and their shared
/// libraries; img.binaries, extra_binaries and missing_binaries say which.
void add_binaries(CpioWriter& cpio, const fs::path& tmp, const ImageOptions& opts,
                  const std::vector<ImageBinary>& extras, Image& img) {
  std::set<std::string> libs;
  const auto add_binary = [&](const std::string& name, const std::string& path) {
    // debug info stays on the host: the initramfs lives in guest RAM (docs/DESIGN.md "Local VMs")
    std::string stripped = (tmp / ("strip-" + name)).string();
    if (run({"strip", "--strip-debug", "-o", stripped, path}).exit_code == 0) {
      cpio.add_host_file(rel(std::string(guest::kBinDir) + "/" + name), stripped, 0755);
      fs::remove(stripped);
    } else {
      cpio.add_host_file(rel(std::string(guest::kBinDir) + "/" + name), path, 0755);
    }
    for (const auto& l : shared_libraries(path)) libs.insert(l);
  };
  for (const auto& [name, path] : find_harness_binaries(opts.bin_dir, opts.with_cli)) {
    add_binary(name, path);
    img.binaries.push_back(name);
  }
  if (!opts.with_cli) cpio.add_file(rel(std::string(guest::kBinDir) + "/harness"), guest_cli_script(), 0755);
  for (const auto& b : extras) {
    add_binary(b.name, b.path);
    img.extra_binaries.push_back(b.name);
    progress("extra binary " + b.name + " (" + b.path + ")");
  }
  for (const auto& name : harness_binary_names()) {
    if (name == "harness" && !opts.with_cli) continue;  // the script above stands in for it
    bool have = false;
    for (const auto& b : img.binaries) have = have || b == name;
    if (!have) {
      img.missing_binaries.push_back(name);
      progress("WARNING: " + name + " not found (build it first); not in the image");
    }
  }
  for (const auto& l : libs) cpio.add_host_file(rel(l), l, 0755);
}

/// The base data disk: agent/, out/ and the canary DB (img.canary_db_sha256).
void write_data_disk(const fs::path& tmp, const ImageOptions& opts, const std::string& cache, Image& img) {
  progress("data disk");
  fs::path staging = tmp / "disk-staging";
  fs::create_directories(staging / "agent");
  fs::create_directories(staging / "out");
  bool have_sqlite = false;
  for (const auto& b : img.binaries) have_sqlite = have_sqlite || b == "canary-sqlite";
  if (opts.canary_db && have_sqlite) {
    std::string canary;
    for (const auto& [n, p] : find_harness_binaries(opts.bin_dir, opts.with_cli))
      if (n == "canary-sqlite") canary = p;
    std::string db = prepare_canary_db(cache, canary);
    fs::copy_file(db, staging / "canary.db");
    img.canary_db_sha256 = harness::digest::sha256_file(db);
  } else if (opts.canary_db) {
    progress("WARNING: canary-sqlite not built: the data disk has no canary DB");
  }
  make_ext4((tmp / "disk-base.img").string(), opts.disk_mib, staging.string());
  fs::remove_all(staging);
}

/// The content hash (img.sha256), the build time and manifest.json.
void write_manifest(const fs::path& tmp, const ImageOptions& opts, const std::string& inputs,
                    std::chrono::steady_clock::time_point t0, Image& img) {
  progress("hashing");
  nlohmann::json art;
  art["vmlinuz"] = harness::digest::sha256_file((tmp / "vmlinuz").string());
  art["initramfs.cpio.gz"] = harness::digest::sha256_file((tmp / "initramfs.cpio.gz").string());
  art["canary.db"] = img.canary_db_sha256;
  art["disk_mib"] = opts.disk_mib;
  img.sha256 = harness::digest::sha256_hex(art.dump());
  img.build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  nlohmann::json m = {{"sha256", img.sha256},
                      {"artifacts_sha256", art},
                      {"hash_rule", "sha256 of artifacts_sha256 serialized as compact JSON"},
                      {"kernel_release", img.kernel_release},
                      {"kernel_package", img.kernel_package},
                      {"kernel_config", img.kernel_config},
                      {"binaries", img.binaries},
                      {"missing_binaries", img.missing_binaries},
                      {"extra_binaries", img.extra_binaries},
                      {"with_cli", img.with_cli},
                      {"modules", img.modules},
                      {"build_seconds", img.build_seconds},
                      {"inputs_sha256", inputs}};
  write_file((tmp / "manifest.json").string(), m.dump(2) + "\n");
}

}  // namespace

Image build_image(const ImageOptions& opts) {
  auto t0 = std::chrono::steady_clock::now();
  std::string cache = cache_root(opts.cache_dir);
  require_own_image_dir(opts, (fs::path(cache) / "image").string());
  const std::vector<ImageBinary> extras = check_extra_binaries(opts.extra_binaries);
  const BuildKernel kernel = choose_kernel(opts, cache);
  const fs::path dir = target_dir(opts, cache);
  const CacheLock lock((dir.parent_path() / (dir.filename().string() + ".lock")).string(), "the image " + dir.string());
  const std::string inputs = kernel.what.rfind("kernel package ", 0) == 0
                                 ? image_inputs_sha256(opts, kernel.k, kernel.check.config_path) : std::string();
  if (!opts.rebuild && !inputs.empty() && image_is_current(dir, inputs)) {
    Image kept = load_image_dir(dir.string());
    kept.reused = true;
    kept.build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    progress("up to date: " + dir.string() + " was built from the same inputs (inputs_sha256 " +
             inputs.substr(0, 16) + "...); kept (--rebuild builds it again)");
    return kept;
  }
  fs::path tmp = dir.parent_path() / (dir.filename().string() + ".building." + std::to_string(getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp);

  Image img;
  img.dir = dir.string();
  img.with_cli = opts.with_cli;
  img.kernel_release = kernel.k.release;
  img.kernel_package = kernel.k.package;
  img.kernel_config = kernel.check.config_path;
  fs::copy_file(kernel.k.vmlinuz, tmp / "vmlinuz", fs::copy_options::overwrite_existing);
  progress("initramfs");
  {
    CpioWriter cpio((tmp / "initramfs.cpio.gz").string());
    add_base(cpio, opts, kernel);
    add_modules(cpio, kernel, img);
    add_binaries(cpio, tmp, opts, extras, img);
    cpio.finish();
  }
  write_data_disk(tmp, opts, cache, img);
  write_manifest(tmp, opts, inputs, t0, img);
  fs::remove_all(dir);
  fs::rename(tmp, dir);
  return load_image_dir(dir.string());
}

Image load_image(const std::string& cache_dir) {
  const fs::path dir = fs::path(cache_root(cache_dir)) / "image";
  if (!fs::exists(dir / "manifest.json"))
    throw std::runtime_error("no guest image in " + dir.string() + ": run `harness vm image` first");
  return load_image_dir(dir.string());
}

Image load_image_dir(const std::string& dir_text) {
  const fs::path dir(dir_text);
  fs::path mf = dir / "manifest.json";
  if (!fs::exists(mf))
    throw std::runtime_error("no guest image in " + dir.string() + " (no manifest.json; build one with `harness vm "
                             "image --out " + dir.string() + "`)");
  nlohmann::json m;
  try {
    m = harness::json::parse_file(mf.string());
  } catch (const std::exception& e) {
    throw std::runtime_error(mf.string() + ": " + e.what());
  }
  Image img;
  img.dir = dir.string();
  img.vmlinuz = (dir / "vmlinuz").string();
  img.initramfs = (dir / "initramfs.cpio.gz").string();
  img.disk_base = (dir / "disk-base.img").string();
  img.sha256 = m.value("sha256", "");
  img.kernel_release = m.value("kernel_release", "");
  img.kernel_package = m.value("kernel_package", "");
  img.kernel_config = m.value("kernel_config", "");
  img.binaries = m.value("binaries", std::vector<std::string>{});
  img.inputs_sha256 = m.value("inputs_sha256", std::string());
  img.missing_binaries = m.value("missing_binaries", std::vector<std::string>{});
  img.extra_binaries = m.value("extra_binaries", std::vector<std::string>{});
  // Images built before --with-cli existed carried the whole CLI.
  img.with_cli = m.value("with_cli", true);
  img.modules = m.value("modules", std::vector<std::string>{});
  img.canary_db_sha256 = m["artifacts_sha256"].value("canary.db", "");
  img.vmlinuz_sha256 = m["artifacts_sha256"].value("vmlinuz", "");
  img.build_seconds = m.value("build_seconds", 0.0);
  return img;
}

}  // namespace harness::vm
