#pragma once
// Hand-built campaign DBs for the analysis unit tests (not captured kernel files: these are
// results-DB rows, whose format is results/schema.sql). Each case gets 101 pressure-phase requests
// per canary with responses k x {1, ..., 101} us, so its type-7 p99 is exactly 100 k us
// (h = 100 x 0.99 = 99 -> x[99] = 100 k), plus requests outside the phase that must be ignored.
// Timeline (ns): pressure [10 s, 20.1 s), request i (0..100) scheduled at 10 s + i x 100 ms with
// seq i + 1 (seq 0 at 9.9 s); recovery [20.1 s, 21.1 s); restoration starts at 21.1 s, so a
// censored request i enters as 11.1 s - i x 0.1 s.
#include "analysis/simulate/synthetic.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace golden {

/// One case of a golden DB. p99 values in us (must be multiples of 100 so k is an integer).
struct Case {
  std::string vm, regime;
  int repeat = 1;
  std::string configuration;           ///< schema name
  double compute_p99_us = 0, sqlite_p99_us = 0;
  std::string status = "completed";
  std::string accelerator = "kvm";
  bool zero_latency_request = false;   ///< one pressure request with completion == scheduled
  int null_completions = 0;            ///< this many pressure requests never completed
  /// Canary killed mid-phase: canary `truncate_canary` (0 compute, 1 sqlite) records pressure
  /// request `truncate_at` without completion (in flight) and nothing after it; -1 = no truncation.
  int truncate_canary = 0;
  int truncate_at = -1;
  bool in_flight_at_kill = true;       ///< false: nothing recorded from truncate_at on
  std::string outcome_json{};          ///< cases.outcome_json (empty = NULL)
};

/// Writes a fresh DB at path with these cases (status "lost": only the cases row, as the runner
/// writes it); extra_schedule adds schedule rows with no case.
void write(const std::string& path, const std::vector<Case>& cases, const std::vector<std::string>& extra_schedule = {});

/// Two strata (vm0/r, vm1/r) x 3 repeats, every case completed; p99 (us): static
/// 10000/20000, delayed 12000/26000, reclaim (9000 + 100 x repeat)/19000 (compute/sqlite).
std::vector<Case> two_strata_three_repeats();

/// A fresh temp file path under the build's temp dir (unique per call).
std::string temp_db(const std::string& stem);

/// write(temp_db(stem), cases, extra_schedule): a fresh DB with these cases; returns its path.
std::string written_db(const std::string& stem, const std::vector<Case>& cases,
                       const std::vector<std::string>& extra_schedule = {});

}  // namespace golden
