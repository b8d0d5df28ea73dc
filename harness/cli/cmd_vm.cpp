// `harness vm ...`: local qemu guests (harness/vm/README.md).
#include "harness/cli/validators.hpp"
#include "harness/text/join.hpp"
#include "registry.hpp"

#include "harness/campaign/model/campaign.hpp"
#include "harness/pool/capacity.hpp"
#include "harness/pool/engine.hpp"
#include "harness/pool/local_guest/local_host.hpp"
#include "harness/pool/local_guest/owner.hpp"
#include "harness/pool/local_guest/slots.hpp"
#include "harness/vm/accel.hpp"
#include "harness/vm/exec.hpp"
#include "harness/vm/fleet.hpp"
#include "harness/vm/paths.hpp"
#include "harness/vm/image.hpp"

#include <cstdio>
#include <memory>
#include <string>

namespace {

struct VmFlags {
  std::string cache;
  harness::vm::ImageOptions image;
  harness::vm::ExecOptions exec;
};

/// The engines `vm down --campaign FILE` can stop guests of (those registering a down), ", "-joined.
std::string engines_with_down() {
  std::vector<std::string> kinds;
  for (const auto& k : harness::pool::engine_kinds())
    if (const auto* e = harness::pool::find_engine(k); e && e->down) kinds.push_back(k);
  return harness::text::join(kinds);
}

/// `vm image`: build, cache and hash the guest image; decide the accelerator.
void add_vm_image(CLI::App* vm, const std::shared_ptr<VmFlags>& flags) {
  auto* image = vm->add_subcommand(
      "image", "Build, cache and content-hash the guest kernel, initramfs and base data disk");
  image->add_option("--kernel", flags->image.kernel,
                    "bzImage to boot instead of the Debian cloud kernel; needs --out DIR (its own image directory, "
                    "for variants.<v>.kernel.image_dir) or --as-default");
  image->add_option("--modules", flags->image.modules, "lib/modules/<release> matching --kernel");
  image->add_option("--kernel-config", flags->image.kernel_config,
                    "the kernel's .config, checked for PSI, memcg, zram, compressors and virtio (default: found next "
                    "to --kernel, in its build tree, in --modules or /boot/config-<release>)");
  image->add_option("--kernel-package", flags->image.kernel_package,
                    "Debian kernel package, e.g. linux-image-6.1.0-56-cloud-amd64 (default: the one "
                    "linux-image-cloud-amd64 depends on); like --kernel, needs --out DIR or --as-default");
  image->add_flag("--as-default", flags->image.as_default,
                  "let --kernel/--kernel-package replace the default image <cache>/image, which every campaign "
                  "boots for `baseline: {}` (without it they are refused unless --out names another directory)");
  image->add_option("--bin-dir", flags->image.bin_dir,
                    "Directory searched first for pressure-gen, canary-compute, canary-sqlite");
  image->add_option("--extra-binary", flags->image.extra_binaries,
                    "Host executable to put into the image beside the harness binaries (/opt/harness/bin, first in "
                    "the guest's PATH) with its shared libraries, e.g. /usr/bin/cyclictest (repeatable; part of the "
                    "inputs hash and of manifest.json extra_binaries; a harness binary's name is refused)")
      ->allow_extra_args(false);
  image->add_option("--busybox", flags->image.busybox, "Static busybox binary")->capture_default_str();
  image->add_option("--disk-mib", flags->image.disk_mib, "Base data disk size, MiB (sparse)")
      ->capture_default_str()->check(CLI::Range(64, 1 << 20));
  image->add_flag("!--no-canary-db", flags->image.canary_db, "Do not prepare the canary SQLite DB");
  image->add_flag("--with-cli", flags->image.with_cli,
                  "Put the whole harness CLI (with libvirt and the analysis) into the guest; by default the "
                  "guest's `harness` runs only `case`, `agent` and `qualify` (from harness-case and harness-agent)");
  image->add_flag("--rebuild", flags->image.rebuild,
                  "Build even when the image was built from the same inputs (harness binary, kernel package, "
                  "busybox, binaries and libraries); by default such an image is kept");
  image->add_option("--out", flags->image.out_dir,
                    "Build into DIR instead of <cache>/image (e.g. a candidate kernel for an A/B campaign: "
                    "variants.candidate.kernel.image_dir, docs/CAMPAIGN.md)");
  auto image_accel = std::make_shared<std::string>();
  image->add_option("--accel", *image_accel, "Accelerator: auto (trial-boot KVM, fall back to TCG), kvm (fail if it cannot run a guest) or tcg; default $HARNESS_ACCEL, else auto")
      ->check(CLI::IsMember({"auto", "kvm", "tcg"}));
  image->callback([flags, image_accel] {
    flags->image.cache_dir = flags->cache;
    harness::vm::Image img = harness::vm::build_image(flags->image);
    const std::string extras = harness::text::join(img.extra_binaries, " ");
    std::printf("image: %s\nsha256: %s\nkernel: %s (%s)\nbinaries: %zu (missing: %zu)\nextra binaries: %s\n"
                "modules: %zu\n%s: %.1f s\n",
                img.dir.c_str(), img.sha256.c_str(), img.kernel_release.c_str(),
                img.kernel_package.empty() ? "user-supplied" : img.kernel_package.c_str(),
                img.binaries.size(), img.missing_binaries.size(), extras.empty() ? "none" : extras.c_str(),
                img.modules.size(),
                img.reused ? "kept (same inputs), checked in" : "build time", img.build_seconds);
    if (!flags->image.out_dir.empty() && !flags->image.as_default)
      std::printf("this is not the default image: a campaign boots it for a variant with "
                  "`kernel: {image_dir: %s}` (relative paths: from the campaign file's folder)\n",
                  img.dir.c_str());
    // Decide (and cache) the accelerator now, so the first `vm up` does not pay the probe.
    harness::vm::AccelRequest req;
    req.requested = *image_accel;
    req.vmlinuz = img.vmlinuz;
    req.cache_dir = harness::vm::cache_root(flags->cache);
    std::printf("%s\n", harness::vm::choose_accelerator(req).message().c_str());
  });

}

/// `vm exec`: one fresh guest runs a script.
void add_vm_exec(CLI::App* vm, const std::shared_ptr<VmFlags>& flags) {
  auto* exec = vm->add_subcommand(
      "exec", "Boot a fresh guest, run a script as root (with /out on the data disk), power off, "
              "copy /out and the console log back");
  exec->add_option("--script", flags->exec.script, "sh script to run in the guest")->required();
  exec->add_option("--collect", flags->exec.collect_dir, "Host directory for /out and console.log")
      ->required();
  exec->add_option("--timeout-s", flags->exec.timeout_s, "Boot+run budget, seconds")
      ->capture_default_str()->check(harness::cli::integer_in(1));
  exec->add_option("--vcpus", flags->exec.vcpus, "vCPUs")->capture_default_str()->check(CLI::Range(1, 64));
  exec->add_option("--memory-mib", flags->exec.memory_mib, "Guest memory, MiB")
      ->capture_default_str()->check(CLI::Range(256, 1 << 20));
  exec->add_option("--swapfile-mib", flags->exec.swapfile_mib, "Swapfile created in the guest, MiB")
      ->capture_default_str()->check(CLI::Range(16, 1 << 20));
  exec->add_flag("--network", flags->exec.network, "Give the guest a user-mode NIC (eth0)");
  exec->add_option("--cmdline", flags->exec.extra_cmdline,
                   "Extra kernel parameter for this boot (repeatable), e.g. psi=0")
      ->allow_extra_args(false);
  exec->add_option("--accel", flags->exec.accelerator, "Accelerator: auto (trial-boot KVM, fall back to TCG), kvm (fail if it cannot run a guest) or tcg; default $HARNESS_ACCEL, else auto")
      ->check(CLI::IsMember({"auto", "kvm", "tcg"}));
  exec->callback([flags] {
    flags->exec.cache_dir = flags->cache;
    harness::vm::ExecResult r = harness::vm::exec_once(flags->exec);
    std::printf("accelerator: %s\nseconds: %.1f\nscript status: %d%s\nconsole: %s\n",
                r.accelerator.c_str(), r.seconds, r.script_status,
                r.timed_out ? " (guest timed out and was killed)" : "", r.console_log.c_str());
    harness::cli::exit_code() = r.timed_out ? 124 : (r.script_status == 0 ? 0 : 1);
  });

}

/// `vm up`: boot local guests after the capacity rule.
void add_vm_up(CLI::App* vm, const std::shared_ptr<VmFlags>& flags) {
  auto fleet = std::make_shared<harness::vm::FleetOptions>();
  auto* up = vm->add_subcommand("up", "Boot local guests running `harness agent`; write the hosts file");
  up->add_option("--count", fleet->count, "Number of guests (vm0..)")->capture_default_str()->check(CLI::Range(1, 64));
  up->add_option("--first-index", fleet->first_index,
                 "Index of the first guest name: --count 2 --first-index 3 boots vm3 and vm4 (guests already up keep "
                 "running; e.g. to add VMs to a hosts file)")
      ->capture_default_str()->check(CLI::Range(0, 1 << 20));
  up->add_option("--hosts-file", fleet->hosts_file, "Hosts file to write (default <cache>/hosts.yaml)");
  up->add_option("--memory-mib", fleet->memory_mib, "Guest memory, MiB (study: 1024)")
      ->capture_default_str()->check(CLI::Range(256, 1 << 20));
  up->add_option("--vcpus", fleet->vcpus, "vCPUs (study: 1)")->capture_default_str()->check(CLI::Range(1, 64));
  up->add_option("--swapfile-mib", fleet->swapfile_mib, "Swapfile created in each guest, MiB")
      ->capture_default_str()->check(CLI::Range(16, 1 << 20));
  up->add_option("--fresh-per-case", fleet->fresh_per_case,
                 "Boot a fresh guest (fresh data disk) before every case")->capture_default_str();
  up->add_flag("--allow-guest-reboot", fleet->guest_reboot,
               "A guest reboot restarts the guest instead of ending qemu, and its agent accepts POST /v1/reboot "
               "(as a real VM with reboot_between_cases; harness/vm/HOSTS.md)");
  up->add_option("--ready-timeout-s", fleet->ready_timeout_s, "Wait for /v1/health, seconds")
      ->capture_default_str()->check(harness::cli::integer_in(1));
  up->add_option("--accel", fleet->accelerator, "Accelerator: auto (trial-boot KVM, fall back to TCG), kvm (fail if it cannot run a guest) or tcg; default $HARNESS_ACCEL, else auto")
      ->check(CLI::IsMember({"auto", "kvm", "tcg"}));
  auto overcommit = std::make_shared<bool>(false);
  up->add_flag("--overcommit", *overcommit,
               "Boot even when the guests (with the ones already running) need more vCPUs than this machine's "
               "online cores - 1 or more memory than MemAvailable (harness/pool/capacity.hpp)");
  up->callback([flags, fleet, overcommit] {
    fleet->cache_dir = flags->cache;
    // The same capacity rule as `harness plan` and `harness run`, before anything boots.
    std::vector<std::string> names;
    for (int i = 0; i < fleet->count; ++i) names.push_back("vm" + std::to_string(fleet->first_index + i));
    const auto verdict = harness::pool::check_capacity(
        {harness::pool::local_guest::local_capacity(names, flags->cache)},
        harness::pool::GuestShape{fleet->vcpus, fleet->memory_mib}, *overcommit, "local-qemu (harness vm up)");
    std::fputs(verdict.table.c_str(), stderr);
    if (!verdict.ok) throw harness::pool::CapacityError(verdict.refusal("give --overcommit"));
    for (const auto& g : harness::vm::fleet_up(*fleet))
      std::printf("%s %s boot-to-ready %.1f s (%s)\n", g.name.c_str(), g.url.c_str(), g.boot_to_ready_s,
                  g.accelerator.c_str());
  });

}

/// `vm down`: stop local guests, or a campaign's guests through its engine.
void add_vm_down(CLI::App* vm, const std::shared_ptr<VmFlags>& flags) {
  auto names = std::make_shared<std::vector<std::string>>();
  auto down_campaign = std::make_shared<std::string>();
  auto down_db = std::make_shared<std::string>();
  auto down_images = std::make_shared<bool>(false);
  auto* down = vm->add_subcommand(
      "down", "Stop local guests (all when no name is given), or with --campaign FILE the guests its engine booted "
              "for that campaign (" + engines_with_down() + ")");
  auto* down_names = down->add_option("names", *names, "Guest names");
  auto* down_file =
      down->add_option("--campaign", *down_campaign,
                       "Campaign file: stop the guests the harness booted for it on its provider's hosts (whatever "
                       "runner booted them; guests of other campaigns and domains without a harness owner record are "
                       "never touched)")
          ->check(CLI::ExistingFile)
          ->excludes(down_names);
  down->add_option("--db", *down_db, "With --campaign: only the guests serving this campaign DB")->needs(down_file);
  down->add_flag("--images", *down_images,
                 "With --campaign: also delete the images this campaign (with --db: this campaign and DB) stored on "
                 "the provider's hosts (libvirt: its claims on image volumes, and each image no other campaign "
                 "claims)")
      ->needs(down_file);
  auto down_purge = std::make_shared<bool>(false);
  down->add_flag("--purge", *down_purge,
                 "With --campaign: after stopping its guests, remove everything the provider's engine stores, for "
                 "every campaign (libvirt: the storage pool on each of its hosts with every volume in it, and the "
                 "cached slotted disks <cache>/libvirt/images); refused while any harness domain runs there")
      ->needs(down_file);
  down->callback([flags, names, down_campaign, down_db, down_images, down_purge] {
    if (down_campaign->empty()) {
      for (const auto& n : harness::vm::fleet_down(flags->cache, *names)) std::printf("stopped %s\n", n.c_str());
      return;
    }
    const auto c = harness::campaign::load_campaign(*down_campaign);
    const auto* e = harness::pool::find_engine(c.provider);
    if (!e || !e->down) {
      std::printf("engine %s boots no guests: nothing to stop\n", c.provider.c_str());
      return;
    }
    harness::pool::DownContext ctx;
    ctx.campaign = c.name;
    ctx.db_path = *down_db;
    ctx.images = *down_images;
    ctx.purge = *down_purge;
    ctx.cache_dir = flags->cache;
    ctx.out = stderr;
    const auto stopped = e->down(c.engine, ctx);
    for (const auto& n : stopped) std::printf("stopped %s\n", n.c_str());
    if (stopped.empty()) std::printf("no running guest of campaign %s\n", c.name.c_str());
  });

}

/// `vm list`, `vm reboot NAME`, `vm console NAME`: one local guest at a time.
void add_vm_guest_commands(CLI::App* vm, const std::shared_ptr<VmFlags>& flags) {
  auto* list = vm->add_subcommand("list", "List local guests (SERVES: the campaign and its VM a running guest serves)");
  list->callback([flags] {
    std::printf("%-6s %-8s %-8s %-24s %-6s %-14s %s\n", "NAME", "STATE", "PID", "URL", "ACCEL", "BOOT-TO-READY",
                "SERVES");
    for (const auto& g : harness::vm::fleet_list(flags->cache)) {
      const auto o = harness::pool::local_guest::read_guest_owner(g.state_dir);
      const std::string serves =
          g.running && o ? o->campaign + "'s " + harness::pool::local_guest::served_vm(o->guest, g.name) : "-";
      char ready[32];
      std::snprintf(ready, sizeof ready, "%.1f s", g.boot_to_ready_s);
      std::printf("%-6s %-8s %-8d %-24s %-6s %-14s %s\n", g.name.c_str(), g.running ? "running" : "stopped", g.pid,
                  g.url.c_str(), g.accelerator.c_str(), ready, serves.c_str());
    }
  });

  auto name = std::make_shared<std::string>();
  auto timeout = std::make_shared<int>(300);
  auto boot = std::make_shared<harness::vm::BootOptions>();
  auto* reboot = vm->add_subcommand("reboot", "Fresh guest: stop, new data disk, boot, wait for /v1/health");
  reboot->add_option("name", *name, "Guest name")->required();
  reboot->add_option("--ready-timeout-s", *timeout, "Wait for /v1/health, seconds")->capture_default_str();
  reboot->add_option("--image-dir", boot->image_dir,
                     "Boot the image built by `harness vm image --out DIR` (default: <cache>/image)");
  reboot->add_option("--cmdline", boot->cmdline,
                     "Extra kernel parameter for this boot (repeatable), e.g. transparent_hugepage=never")
      ->allow_extra_args(false);
  reboot->callback([flags, name, timeout, boot] {
    auto g = harness::vm::fleet_reboot(flags->cache, *name, *timeout, *boot);
    std::printf("%s %s boot-to-ready %.1f s (%s)\n", g.name.c_str(), g.url.c_str(), g.boot_to_ready_s,
                g.accelerator.c_str());
  });

  auto* console = vm->add_subcommand("console", "Print a guest's serial console log");
  console->add_option("name", *name, "Guest name")->required();
  console->callback([flags, name] {
    std::string p = harness::vm::console_log_path(flags->cache, *name);
    std::fputs(harness::vm::read_file(p).c_str(), stdout);
  });
}

void add_vm(CLI::App& app) {
  auto flags = std::make_shared<VmFlags>();
  auto* vm = app.add_subcommand("vm", "Local qemu guests: image build, one-shot exec, vm up/down/list");
  vm->require_subcommand(1);
  vm->add_option("--cache", flags->cache,
                 "Cache root (default $XDG_CACHE_HOME or ~/.cache/reclaim-harness)");

  add_vm_image(vm, flags);
  add_vm_exec(vm, flags);
  add_vm_up(vm, flags);
  add_vm_down(vm, flags);
  add_vm_guest_commands(vm, flags);
}

const bool kVmRegistered = harness::cli::register_commands("vm", add_vm);

}  // namespace
