#pragma once
// Per-case summaries the analysis works from: pressure-phase latency quantiles per canary and
// the mechanism counters of the pressure phase. Definitions: DESIGN.md "The case"/"Analysis",
// results/schema.sql (units), study (wake delay, service time, deadline miss).
#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace analysis {

/// The three configurations of the study, in report order.
enum class Config { Static = 0, Delayed = 1, Reclaim = 2 };
/// The two canaries (primary outcomes), in report order.
enum class Canary { Compute = 0, Sqlite = 1 };

/// "static-zram" | "delayed-activation" | "bounded-reclaim" (schema names).
const char* config_name(Config c);
/// "compute" | "sqlite".
const char* canary_name(Canary c);
/// Parses a schema configuration name; std::nullopt when unknown.
std::optional<Config> parse_config(const std::string& s);

/// One canary request as stored (CLOCK_MONOTONIC ns; wake/completion may be NULL).
struct RawRequest {
  std::int64_t seq = 0;
  std::int64_t scheduled_ns = 0;
  std::optional<std::int64_t> wake_ns;
  std::optional<std::int64_t> completion_ns;
};

/// Latency of one canary over the pressure phase of one case. All times in microseconds (us).
/// A request belongs to the pressure phase when scheduled_ns is in [start_ns, end_ns).
/// A request that never completed (completion NULL) counts as a deadline miss and enters the
/// response quantiles as +inf (decision documented in analysis/README.md): p99 stays finite unless
/// more than ~1% of the phase's requests never completed. Its wake/service are left out.
struct LatencySummary {
  std::size_t requests = 0;         ///< requests scheduled in the pressure phase
  std::size_t incomplete = 0;       ///< completion NULL (never completed)
  std::size_t deadline_misses = 0;  ///< completion > scheduled + period, plus incomplete ones
  std::size_t nonpositive = 0;      ///< response <= 0 (clock or recording error)
  std::int64_t first_nonpositive_seq = -1;  ///< seq of the first such request, -1 if none
  double p50_us = 0, p95_us = 0, p99_us = 0;          ///< response = completion - scheduled
  double wake_p50_us = 0, wake_p99_us = 0;            ///< wake delay = wake - scheduled
  double service_p50_us = 0, service_p99_us = 0;      ///< service = completion - wake
  bool has_wake = false;                              ///< wake/service quantiles available
};

/// Summarises requests of one canary for the phase [start_ns, end_ns); period_ns defines a
/// deadline miss. Errors: std::invalid_argument when no request lies in the phase.
LatencySummary summarize_requests(std::span<const RawRequest> reqs, std::int64_t start_ns,
                                  std::int64_t end_ns, std::int64_t period_ns);

/// Mechanism counters over the pressure phase (differences of cumulative counters between the
/// first and last 1 Hz telemetry sample whose t_ns is in [start_ns, end_ns]); absent when fewer
/// than two samples carry the column.
struct Mechanism {
  std::optional<double> bg_some_stall_s, bg_full_stall_s;  ///< bg memory.pressure totals, s
  std::optional<double> fg_some_stall_s, fg_full_stall_s;  ///< fg memory.pressure totals, s
  std::optional<double> refaults;         ///< bg+fg workingset_refault_anon+file, count
  std::optional<double> swapout_kib;      ///< pswpout delta x page size, KiB
  std::optional<double> zram_orig_peak_mib, zram_compr_peak_mib, zram_mem_used_peak_mib;  ///< MiB, max in phase
  std::optional<double> oom_kills;        ///< bg+fg memory.events oom_kill delta
};

/// Everything the reports need about one case (latest attempt).
struct CaseSummary {
  std::string case_id, campaign, vm, regime, triplet_id, status, accelerator, kernel_release;
  std::int64_t repeat = 0;
  Config configuration = Config::Static;
  std::optional<std::int64_t> dose_bytes;
  std::int64_t page_size_bytes = 4096;
  nlohmann::json spec;                   ///< spec_json (harness/case/SPEC.md)
  std::int64_t pressure_start_ns = 0, pressure_end_ns = 0;
  std::array<std::optional<LatencySummary>, 2> latency;  ///< per Canary; empty = no requests
  Mechanism mech;
  bool usable = true;                    ///< false: excluded (reason in `excluded_because`)
  std::string excluded_because;
};

}  // namespace analysis
