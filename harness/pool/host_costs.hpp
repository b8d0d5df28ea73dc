#pragma once
// What an engine measured a host's guests to cost, kept between runs so that `harness plan`
// can use it offline (harness/campaign/plan/wall_time.hpp): a boot (engine start -> agent health
// 200), the KVM trial boot, and an image upload. One small JSON file per engine and host,
// next to the KVM verdict cache (the machine-wide probe directory, harness/vm/accel.hpp
// machine_probe_dir(): $HARNESS_ACCEL_PROBE_DIR, /run/reclaim-harness or
// /tmp/reclaim-harness-<uid>), named host-costs-<first 16 hex of SHA-256(engine|host)>.json,
// where host is the host's identity (host_identity.hpp) as Guest::host and the capacity
// table name it. A file that cannot be read counts as "not yet measured"; one that cannot be
// written only loses the measurement (never an error); two processes recording at the same
// moment may lose one sample (each file is replaced whole, atomically).
//
// Boots: the last kBootSamples boots under one accelerator (a boot under another accelerator
// starts the list again: a TCG boot says nothing of a KVM boot); the estimate is their
// median. Trial and upload: the last one.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace harness::pool {

/// Boots kept per host.
inline constexpr std::size_t kBootSamples = 15;

/// One measured cost.
struct Measured {
  double seconds = -1;          ///< the estimate (boots: median of the samples), s; -1 = not measured
  std::int64_t unix_time = 0;   ///< when last measured (UTC seconds)
  int samples = 0;              ///< how many measurements the estimate stands on
  bool known() const { return seconds >= 0; }
};

/// What is known of one host.
struct HostCosts {
  std::string engine;        ///< provider.kind that measured it
  std::string host;          ///< host identity (host_identity.hpp)
  std::string accelerator;   ///< of the boots (kvm | tcg); "" = no boot measured
  Measured boot;             ///< engine start -> agent ready
  Measured kvm_trial;        ///< the KVM trial boot (a verdict taken from the cache records nothing)
  Measured upload;           ///< one image's upload to the host (libvirt; never for local guests)
};

/// The directory of the cost files ("" = harness::vm::machine_probe_dir()).
std::string host_costs_dir(const std::string& dir = "");

/// What `dir` holds for `engine` and `host` (identities are applied to `host`); every cost
/// unknown when nothing is recorded.
HostCosts read_host_costs(const std::string& engine, const std::string& host, const std::string& dir = "");

/// Records one boot of `seconds` under `accelerator` (now).
void record_boot(const std::string& engine, const std::string& host, const std::string& accelerator, double seconds,
                 const std::string& dir = "");
/// Records the KVM trial boot's wall time (now).
void record_kvm_trial(const std::string& engine, const std::string& host, double seconds, const std::string& dir = "");
/// Records one image upload's wall time (now).
void record_upload(const std::string& engine, const std::string& host, double seconds, const std::string& dir = "");

/// "2026-12-05" (UTC) of `unix_time`.
std::string utc_date(std::int64_t unix_time);

}  // namespace harness::pool
