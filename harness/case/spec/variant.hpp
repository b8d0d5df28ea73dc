#pragma once
// The A/B variant of a case (design.kind ab-pairs, docs/CAMPAIGN.md "variants"; ours): what the executor applies
// before the case and restores after it (harness/case/SPEC.md "variant").
//
//   verify boot -> for each sysctl, then each sysfs knob: read `before`, write, read back
//   ... case ... -> restoration: write `before` back, read back, judge
//
// Boot: every cmdline parameter must be a word of /proc/cmdline and, when set, uname -r
// (kernel_release) must equal the spec's: a mismatch means the runner booted the wrong
// guest (infra_failed). A knob whose before-read, write or read-back fails makes the case
// infra_failed naming the key and errno; so does a write that left the file unchanged
// (read back = before != written). The kernel may normalise what it reads back
// (lru_gen/enabled: "y" -> "0x0007"): the record keeps the raw text and `matches`.
// All file access goes through harness::kernel::Fs (fixture roots in the unit tests).
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/error/expected.hpp"
#include "harness/kernel/fs.hpp"

namespace harness::case_ {

/// spec_json.variant (SPEC.md). Names and values are validated by parse_spec with the
/// rules below.
struct VariantSpec {
  std::string name;      ///< "baseline" | "candidate" (any [A-Za-z0-9_-]{1,32})
  std::string pair_id;   ///< "<vm>/<regime>/<repeat>/<configuration>"
  std::vector<std::pair<std::string, std::string>> sysctls;  ///< "vm.swappiness" -> "200"
  std::vector<std::pair<std::string, std::string>> sysfs;    ///< "/sys/kernel/mm/..." -> "y"
  std::vector<std::string> cmdline;                          ///< e.g. "transparent_hugepage=never"
  std::optional<std::string> kernel_release;                 ///< required uname -r
  std::optional<std::string> kernel_image_dir;               ///< host path (the runner boots it)
};

// --- validation rules (ours; shared by the campaign loader and parse_spec) ----

/// sysctl name: `[a-z0-9_.-]+` with at least one dot, no empty component, the first
/// component without '-' ("vm.swappiness", "vm.page-cluster"). Syntax only; see
/// check_sysctl_name() for what a variant may set.
bool valid_sysctl_name(const std::string& name);
/// The sysctls a variant may set (ours, docs/CAMPAIGN.md "variants"): the vm.* reclaim,
/// swap, watermark, writeback and compaction knobs an A/B campaign compares, nothing
/// that panics, reboots or changes the OOM policy (kernel.*, vm.panic_on_oom, ...).
const std::vector<std::string>& allowed_sysctls();
/// The sysfs knobs a variant may set (ours, docs/CAMPAIGN.md): MGLRU, THP and swap
/// readahead files under /sys/kernel/mm/.
const std::vector<std::string>& allowed_sysfs_knobs();
/// Whether `name` is a sysctl a variant may set, or the Problem: not a sysctl name
/// ("is not a sysctl name ..."), or not in allowed_sysctls() ("is not a sysctl a variant
/// may set ..."). Used by the campaign loader and parse_spec.
Checked check_sysctl_name(const std::string& name);
/// /proc/sys path of a sysctl name, root-relative: "proc/sys/vm/swappiness".
std::string sysctl_path(const std::string& name);
/// Whether `path` is an allowed sysfs knob, or the Problem: absolute, under /sys/kernel/mm/,
/// safe characters only, no "." or ".." component (check_safe_path in safe_path.hpp), and
/// one of allowed_sysfs_knobs().
Checked check_sysfs_path(const std::string& path);
/// Knob value: `[A-Za-z0-9 _.,:=+-]{1,64}`.
bool valid_variant_value(const std::string& value);
/// Kernel command-line parameter: `[A-Za-z0-9_.,=:+-]{1,256}`.
bool valid_cmdline_param(const std::string& param);

/// True when the kernel's read-back `readback` shows `written`: equal after trimming and
/// collapsing whitespace, or equal to the bracketed word of a choice file ("a [b] c"), or
/// both integers (base 0: 0x.. hex) of the same value.
bool readback_matches(const std::string& written, const std::string& readback);
/// What to write to put a knob back to `before`: the bracketed word of a choice file, else
/// `before` trimmed.
std::string restore_value(const std::string& before);

/// One knob as applied and restored (outcome_json.variant.settings.<key>).
struct KnobRecord {
  std::string key;       ///< sysctl name or sysfs path
  std::string path;      ///< root-relative file
  std::optional<std::string> before, readback, restored_readback;
  std::string written;
  bool write_attempted = false, write_ok = false, restore_attempted = false;
  int err = 0;           ///< errno of the failing apply step (0 = none)
  std::string error;     ///< "" = applied
  std::string restore_error;  ///< "" = restored and read back equal to `before`
  nlohmann::json to_json() const;
};

/// Applies and restores one variant on the system under `fs`.
class VariantApplier {
 public:
  VariantApplier(const harness::kernel::Fs& fs, VariantSpec v) : fs_(fs), v_(std::move(v)) {}

  /// Verifies the boot, then writes the knobs in order (sysctls, then sysfs): passed when every
  /// knob is applied, else the infra_failed reason (naming the key, path and errno). Stops at
  /// the first failure; restore() puts back what was written.
  Checked apply();
  /// Writes `before` back to every knob apply() wrote successfully (reverse order; a failed
  /// write changed nothing) and reads it back.
  /// Returns one sentence per knob not restored (none: clean), the findings the restoration
  /// records (outcome_json.variant.restore_problems). Idempotent: a second call does nothing
  /// and returns the first call's sentences.
  std::vector<std::string> restore();
  bool needs_restore() const { return !restored_ && !records_.empty(); }
  /// {name, pair_id, boot: {cmdline: {param: present}, kernel_release: {expected, actual}},
  ///  settings: {key: KnobRecord}, restored: bool|null, restore_problems: [..]}.
  nlohmann::json to_json() const;

 private:
  Checked apply_knob(const std::string& key, const std::string& path, const std::string& value);

  harness::kernel::Fs fs_;
  VariantSpec v_;
  nlohmann::json boot_ = nlohmann::json::object();
  std::vector<KnobRecord> records_;
  bool restored_ = false;
  std::vector<std::string> restore_problems_;
};

}  // namespace harness::case_
