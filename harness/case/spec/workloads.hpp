#pragma once
// Command lines of the workload processes, built from the spec (flags: pressure/options.cpp,
// canaries/canary_runner.cpp, canaries/canary_sqlite_main.cpp). Pure; unit-tested.
#include <cstdint>
#include <string>
#include <vector>

#include "harness/case/spec/spec.hpp"

namespace harness::case_ {

class Workloads {
 public:
  /// `bin_dir` holds the binaries; traces go to `work_dir`/canary-<name>.trace.
  Workloads(const CaseSpec& spec, std::string bin_dir, std::string work_dir);

  /// pressure-gen --allocation-mib M --rate-mib-s R --active-set-mib A
  ///   --active-set-slide-mib-s V --contents C
  ///   --seed N --duration-s S  (S: safety net; the executor sends SIGTERM at pressure end)
  std::vector<std::string> pressure_gen(std::int64_t duration_s) const;
  /// canary-compute --period-ms P --duration-s S --hot-mib H --trace F --start-at-ns T --seed N
  std::vector<std::string> canary_compute(std::int64_t start_at_ns, std::int64_t duration_s) const;
  /// `start_at_ns`: the canary's schedule origin (CaseClock: compute T0, SQLite T0 + offset).
  /// canary-sqlite run --db D --period-ms P --duration-s S --queries-per-request Q --trace F
  ///   --start-at-ns T --seed N
  std::vector<std::string> canary_sqlite(std::int64_t start_at_ns, std::int64_t duration_s) const;

 private:
  const CaseSpec& spec_;
  std::string bin_dir_, work_dir_;
};

}  // namespace harness::case_
