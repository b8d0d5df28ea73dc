// `harness qualify`: the study's per-host qualification (qualify/qualify.hpp).
// Exit 0 only when every required check passes; 1 when any fails; bad flags exit 64
// (harness/cli/exit_codes.hpp) with a message naming the flag.
#include <cstdio>
#include <iostream>
#include <memory>

#include "harness/case/run/executor.hpp"
#include "harness/cli/registry.hpp"
#include "harness/cli/validators.hpp"
#include "harness/kernel/size.hpp"
#include "qualify/qualify.hpp"
#include "qualify/thresholds.hpp"

namespace {

struct QualifyFlags {
  qualify::Options opt;
  bool json = false;
  /// Same default as `harness case run --min-free-disk-mib` (the executor's), so a host that
  /// qualifies is not refused by every case for disk space.
  std::uint64_t min_free_mib = qualify::kMinFreeDiskMiB;
  std::string min_free_deprecated;  ///< --min-free-disk SIZE (old spelling)
  bool no_probe = false;
};

void add_qualify(CLI::App& app) {
  auto flags = std::make_shared<QualifyFlags>();
  auto* sub = app.add_subcommand(
      "qualify",
      "Check that this host can run cases (root, kernel/PSI/cgroup2 memory, writable memory.reclaim, zram, "
      "swapfile, disk, clean swap, source commit, VM shape) and record its configuration. Exit 0 only when "
      "every required check passes.");
  sub->add_flag("--json", flags->json, "print the report as JSON (the agent's GET /v1/qualification shape)");
  sub->add_option("--root", flags->opt.root, "filesystem root to inspect (default /; tests use fixture trees)");
  sub->add_option("--swapfile", flags->opt.swapfile_path,
                  "the campaign's swapfile (required check; on the live system also a trial swapon/swapoff while "
                  "no swap is active)");
  sub->add_option("--zram-algorithm", flags->opt.zram_algorithm,
                  "the campaign's zram compressor (e.g. lzo-rle): checked in zram comp_algorithm, /proc/crypto or "
                  "the kernel's modules");
  sub->add_flag("!--no-trial-swapon", flags->opt.trial_swapon, "skip the trial swapon/swapoff of --swapfile");
  sub->add_option("--vcpus", flags->opt.vcpus, "vCPUs of the campaign's VM shape")->capture_default_str()
      ->check(harness::cli::integer_in(1, 4096));
  sub->add_option("--memory-mib", flags->opt.memory_mib, "memory of the campaign's VM shape, MiB")
      ->capture_default_str()->check(harness::cli::integer_in(1));
  sub->add_option("--memory-tolerance", flags->opt.memory_tolerance,
                  "allowed |MemTotal - shape| as a fraction of the shape (guest kernel reserves memory)")
      ->capture_default_str()->check(CLI::Range(0.0, 1.0));
  sub->add_option("--pinned-commit", flags->opt.pinned_commit, "'any' or the 40-hex commit the campaign pins")
      ->capture_default_str();
  sub->add_option("--disk-path", flags->opt.disk_path, "directory holding the DB, traces and swapfile")
      ->capture_default_str();
  sub->add_option("--min-free-disk-mib", flags->min_free_mib,
                  "free space required at --disk-path, MiB (default: what `harness case run` requires)")
      ->capture_default_str()->check(harness::cli::integer_in(0, 1ull << 30));
  sub->add_option("--min-free-disk", flags->min_free_deprecated,
                  "DEPRECATED: use --min-free-disk-mib (this older spelling takes a size such as 2G or 512M)")
      ->excludes("--min-free-disk-mib");
  sub->add_flag("--no-reclaim-probe", flags->no_probe,
                "do not create the scratch cgroup (the memory_reclaim check then fails as 'not probed')");
  sub->callback([flags] {
    auto& f = *flags;
    f.opt.min_free_disk_bytes = f.min_free_mib << 20;
    if (!f.min_free_deprecated.empty()) {
      try {
        f.opt.min_free_disk_bytes = harness::kernel::parse_human_size(f.min_free_deprecated, "size");
      } catch (const std::exception& e) {
        throw CLI::ValidationError("--min-free-disk", e.what());
      }
      std::fprintf(stderr, "harness qualify: --min-free-disk is deprecated; use --min-free-disk-mib %llu\n",
                   static_cast<unsigned long long>(f.opt.min_free_disk_bytes >> 20));
    }
    if (!qualify::valid_pinned_commit(f.opt.pinned_commit))
      throw CLI::ValidationError("--pinned-commit", "'" + f.opt.pinned_commit + "' is neither 'any' nor 40 hex digits");
    f.opt.probe_reclaim = !f.no_probe;
    const auto rep = qualify::run(f.opt);
    if (f.json)
      std::cout << rep.to_json().dump(2) << "\n";
    else
      std::cout << rep.to_table();
    harness::cli::exit_code() = rep.passed ? 0 : 1;
  });
}

const bool kQualifyRegistered = harness::cli::register_commands("qualify", add_qualify);

}  // namespace
