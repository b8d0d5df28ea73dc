#pragma once
// Pressure-phase mechanism counters of one calibration bundle, measured as the analysis
// does (analysis/data/campaign_data.cpp: difference between the first and last telemetry
// sample with t_ns in [pressure start, pressure end]), plus a projection to the study's
// 300 s phase for shortened cases.
#include <optional>
#include <string>

namespace harness::calibrate {

struct Measured {
  std::string case_id, status;
  std::string accelerator;                 ///< cases.accelerator: kvm | tcg | real | unknown ("" = not recorded)
  double pressure_s = 0;                   ///< scheduled pressure phase, s
  std::optional<double> swapout_kib;       ///< /proc/vmstat pswpout delta x page size, KiB
  std::optional<double> refault_anon_bg;   ///< bg workingset_refault_anon delta (calibration target)
  std::optional<double> refault_all;       ///< bg+fg anon+file delta (the analysis' "refaults")
  std::optional<double> bg_some_s, bg_full_s;  ///< bg PSI some/full stall, s (inflated under TCG)
  std::optional<double> episode_s, episode_fraction;  ///< outcome_json.load.episode
  std::optional<double> achieved_rate_mib_s;          ///< outcome_json.load
  /// Projection to 300 s: value + (rate over the second half of the phase) x (300 - P).
  /// Equal to the measured value when P >= 300.
  std::optional<double> swapout_kib_300, refault_anon_bg_300;
};

/// Reads the bundle at `path` (one case). Throws results::DbError when unreadable.
Measured measure_bundle(const std::string& path, double target_pressure_s = 300);

}  // namespace harness::calibrate
