#pragma once
// How the pilot rule reads two phrases of the study that admit more than one reading
// (campaign YAML `eligibility.restoration`, `eligibility.eagain`; docs/CAMPAIGN.md; the
// readings are assumptions, campaigns/README.md "Assumptions" and docs/PROTOCOL.md
// "Pilot rule, to the letter"). The defaults are the harness's reading before these keys
// existed, so a campaign without them plans and selects exactly as before.
#include <optional>
#include <string>
#include <vector>

namespace analysis {

struct PilotReading {
  /// "left valid ... restoration telemetry" (study).
  enum class Restoration {
    /// `clean` (default): restoration.clean = 1, every check of the restoration
    /// (harness/case/host/restoration_check.hpp), the VM's MemAvailable baseline and swap in use
    /// on a device the case did not enable included.
    Clean,
    /// `case-teardown`: the case's own teardown verified (its swap devices off, its cgroups
    /// gone, no stray process, zram reset and removed, variant knobs back); a MemAvailable
    /// shortfall against the VM's baseline and swap in use on another device are VM state
    /// the case's telemetry recorded validly, not a fault of that telemetry.
    CaseTeardown,
  };
  /// EAGAIN from the memory.reclaim write (Linux 6.1: the kernel reclaimed less than asked).
  enum class Eagain {
    /// `interface-error` (default): any non-zero errno of the write is an interface error.
    InterfaceError,
    /// `partial-reclaim`: EAGAIN is a partial reclaim, judged by the achieved criterion
    /// (>= min_achieved_ratio of the request) alone; other errnos stay interface errors.
    PartialReclaim,
  };
  Restoration restoration = Restoration::Clean;
  Eagain eagain = Eagain::InterfaceError;

  bool operator==(const PilotReading&) const = default;
  /// True for the defaults (the reading a campaign without the keys gets).
  bool is_default() const { return *this == PilotReading{}; }
  /// "restoration clean, EAGAIN interface-error": the two YAML values, for reports.
  std::string text() const;
};

/// The YAML spelling of each value ("clean", "case-teardown", "interface-error",
/// "partial-reclaim"): the one place these names are written.
const char* name_of(PilotReading::Restoration r);
const char* name_of(PilotReading::Eagain e);

/// The value named `name`, nullopt when no value has that name.
std::optional<PilotReading::Restoration> restoration_named(const std::string& name);
std::optional<PilotReading::Eagain> eagain_named(const std::string& name);

/// "clean, case-teardown" and "interface-error, partial-reclaim", for messages.
std::string restoration_names();
std::string eagain_names();

/// The four readings, the defaults first.
std::vector<PilotReading> all_pilot_readings();

}  // namespace analysis
