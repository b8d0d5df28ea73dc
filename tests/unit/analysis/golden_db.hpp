#pragma once
// Hand-built campaign DBs for the analysis unit tests (not captured kernel files: these are
// results-DB rows, whose format is results/schema.sql). Each case gets 101 pressure-phase requests
// per canary with responses k x {1, ..., 101} us, so its type-7 p99 is exactly 100 k us
// (h = 100 x 0.99 = 99 -> x[99] = 100 k), plus requests outside the phase that must be ignored.
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
};

/// Writes a fresh DB at path with these cases; extra_schedule adds schedule rows with no case.
void write(const std::string& path, const std::vector<Case>& cases, const std::vector<std::string>& extra_schedule = {});

/// A fresh temp file path under the build's temp dir (unique per call).
std::string temp_db(const std::string& stem);

}  // namespace golden
