#pragma once
// `harness vm image`: builds, caches and content-hashes the guest artifacts
// (docs/DESIGN.md "Local VMs"): kernel (Debian cloud package or user-supplied), initramfs
// (busybox-static, modules in dependency order, harness binaries and --extra-binary files +
// their shared libraries, /init) and the base data disk (ext4 with the prepared canary SQLite DB). Stored in
// <cache>/image/.
#include "harness/vm/kernel_fetch.hpp"

#include <string>
#include <vector>

namespace harness::vm {

/// Inputs of an image build. Empty strings mean "default".
struct ImageOptions {
  std::string cache_dir;    ///< cache root override (default ~/.cache/reclaim-harness)
  std::string kernel;       ///< --kernel: bzImage path (requires modules)
  std::string modules;      ///< --modules: lib/modules/<release> directory
  std::string kernel_package;  ///< Debian package; default resolved from linux-image-cloud-amd64
  std::string bin_dir;      ///< extra directory searched first for harness binaries
  std::string busybox = "/bin/busybox";  ///< static busybox (busybox-static package)
  int disk_mib = 4096;      ///< base data disk size, MiB (sparse; the executor's qualification wants 2 GiB free)
  bool canary_db = true;    ///< prepare the canary SQLite DB (canary-sqlite prepare --db F)
  /// --out: build into this directory instead of <cache>/image (a second image, e.g. a
  /// candidate kernel for an A/B campaign: variants.candidate.kernel.image_dir). Replaced
  /// atomically when it holds an earlier build. "" = <cache>/image.
  std::string out_dir;
  /// --kernel-config: the kernel's build configuration (default: found next to the kernel,
  /// kernel_requirements.hpp find_kernel_config).
  std::string kernel_config;
  /// --as-default: a kernel other than the Debian default (kernel or kernel_package) may
  /// replace the default image <cache>/image. Without it such a build needs out_dir naming
  /// another directory (ours: the default image is what `baseline: {}` boots, so replacing
  /// it silently makes an A/B comparison compare the new kernel with itself).
  bool as_default = false;
  /// --rebuild: build even when the image in the target directory was built from the same
  /// inputs (ImageOptions reuse rule in build_image).
  bool rebuild = false;
  /// --extra-binary (repeatable): host executables put into the image beside the harness
  /// binaries (guest /opt/harness/bin) with their shared libraries, e.g. /usr/bin/cyclictest.
  /// Checked by check_extra_binaries (extra_binaries.hpp) before anything is built.
  std::vector<std::string> extra_binaries;
  /// --with-cli: put the whole `harness` CLI (this executable, with the workstation's
  /// libraries: libvirt, yaml-cpp, the analysis) into the image. Without it the guest's
  /// `harness` is a small script that passes `case` to harness-case and `agent` and `qualify`
  /// to harness-agent (guest_cli_script), and the image carries only what runs in a guest:
  /// about 44 MiB less to unpack into guest RAM at every boot (docs/DESIGN.md "Local VMs").
  bool with_cli = false;
};

/// Refuses a build that would put a kernel other than Debian's default into the default
/// image without --as-default (ImageOptions::as_default). `default_dir` is <cache>/image.
/// Throws std::runtime_error whose message shows the two-image recipe (docs/CI.md "What a job does").
void require_own_image_dir(const ImageOptions& opts, const std::string& default_dir);

/// A built image (also the content of <dir>/manifest.json).
struct Image {
  std::string dir;          ///< <cache>/image
  std::string vmlinuz;      ///< kernel bzImage (copied into dir)
  std::string initramfs;    ///< initramfs.cpio.gz
  std::string disk_base;    ///< disk-base.img (ext4), copied per guest
  std::string kernel_release;
  std::string kernel_package;  ///< "" when user-supplied
  std::string kernel_config;   ///< the build configuration checked (kernel_requirements.hpp); "" = none found (old manifest)
  std::vector<std::string> binaries;  ///< harness binaries included (names)
  std::vector<std::string> missing_binaries;  ///< looked for, not found (warned)
  std::vector<std::string> extra_binaries;    ///< --extra-binary files included (names in the guest's bin directory)
  bool with_cli = false;              ///< the whole `harness` CLI is in the image (ImageOptions::with_cli)
  std::vector<std::string> modules;   ///< module paths in insmod order (guest paths)
  std::string canary_db_sha256;       ///< "" when no canary DB was prepared
  std::string sha256;       ///< content hash: SHA-256 over the artifacts' hashes (see manifest)
  /// SHA-256 of the kernel alone (manifest artifacts_sha256.vmlinuz): what tells whether two
  /// images boot the same kernel, whatever else (harness binaries, canary DB) differs.
  std::string vmlinuz_sha256;
  double build_seconds = 0; ///< wall time of the build (of this call: the check alone when reused)
  /// SHA-256 of what the build read (builder, kernel, configuration, busybox, binaries and
  /// --extra-binary files, their libraries, disk size, canary DB flag); "" for a user-supplied
  /// --kernel (always rebuilt).
  std::string inputs_sha256;
  bool reused = false;      ///< build_image found these inputs already built and kept the image
};

/// Modules the guest needs: zram + compressors (lzo, lzo-rle, lz4, lz4hc, zstd),
/// virtio block and net (dependencies are added by module_load_order).
std::vector<std::string> wanted_modules();

/// Host paths of the harness binaries an image carries: harness-agent, harness-case,
/// pressure-gen, canary-compute, canary-sqlite, searched in `bin_dir`, this executable's
/// directory and the build tree next to it (<build>/harness/cli, <build>/pressure,
/// <build>/canaries), and with `with_cli` also harness (this executable). Missing ones are absent.
std::vector<std::pair<std::string, std::string>> find_harness_binaries(const std::string& bin_dir,
                                                                       bool with_cli);

/// The guest's `harness` in an image built without --with-cli: a POSIX sh script that execs
/// harness-case for `case` and harness-agent for `agent` and `qualify`, and for anything else
/// exits 64 naming what the image carries and the flag that puts the whole CLI in.
std::string guest_cli_script();

/// Shared libraries (including the dynamic loader) that `binary` loads, from `ldd`.
/// Empty for static binaries. Throws std::runtime_error when a library is "not found".
std::vector<std::string> shared_libraries(const std::string& binary);

/// SHA-256 over what a build from a Debian kernel package reads (Image::inputs_sha256): the
/// builder (the running harness binary: the init script, module list and layout are its code),
/// `kernel`'s package, release and vmlinuz, the configuration file `config` ("" = none), busybox,
/// each harness binary and each --extra-binary (its name and content) and the shared libraries
/// of all of them, disk_mib and canary_db. Without extra binaries the hash is what it was before
/// --extra-binary existed, so earlier images stay current. Throws std::runtime_error when a file
/// is unreadable, a library is not found (shared_libraries) or an extra binary is refused
/// (check_extra_binaries).
std::string image_inputs_sha256(const ImageOptions& opts, const GuestKernel& kernel, const std::string& config);

/// Builds (or rebuilds) the image into <cache>/image (or opts.out_dir; a directory that is a
/// symbolic link is built where it points). Progress goes to stderr.
/// First refuses what require_own_image_dir refuses and the --extra-binary paths
/// check_extra_binaries refuses, then checks the kernel's configuration
/// (kernel_requirements.hpp require_guest_kernel: PSI, memcg, zram, compressors, virtio).
/// Reuse: when the target's manifest records the same inputs_sha256 (the running harness
/// binary, the Debian kernel package's vmlinuz and configuration, busybox, every binary put in
/// the image (--extra-binary files included) and its shared libraries, disk_mib, canary_db) and its files are there, the image
/// is kept (Image::reused) unless opts.rebuild; a --kernel build is always rebuilt.
/// Throws std::runtime_error on any failure, naming the step and file.
Image build_image(const ImageOptions& opts);

/// Reads <cache>/image/manifest.json. Throws std::runtime_error ("run `harness vm image`
/// first") when there is no built image.
Image load_image(const std::string& cache_dir);

/// Reads the image in `dir` (its manifest.json), e.g. one built with --out. Throws
/// std::runtime_error naming the directory when it holds no manifest.json.
Image load_image_dir(const std::string& dir);

}  // namespace harness::vm
