#pragma once
// Pressure stall information (PSI): cgroup memory.pressure / cpu.pressure / io.pressure
// and /proc/pressure/{memory,io,cpu}. Format (Documentation/accounting/psi.rst):
//   some avg10=0.00 avg60=0.00 avg300=0.00 total=0
//   full avg10=0.00 avg60=0.00 avg300=0.00 total=0
// total is cumulative stall time in microseconds (study: "in microseconds").
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace harness::kernel {

/// One PSI line ("some" or "full").
struct PsiLine {
  double avg10 = 0;   ///< % of wall time stalled, 10 s running average
  double avg60 = 0;   ///< % over 60 s
  double avg300 = 0;  ///< % over 300 s
  std::uint64_t total_us = 0;  ///< cumulative stall time, microseconds
};

/// A parsed pressure file. `full` is absent when the file has no full line
/// (/proc/pressure/cpu on the 6.1 root has only "some"; cgroup cpu.pressure has both).
struct Psi {
  PsiLine some;
  std::optional<PsiLine> full;
  std::uint64_t some_total_us() const { return some.total_us; }
  std::optional<std::uint64_t> full_total_us() const {
    return full ? std::optional<std::uint64_t>(full->total_us) : std::nullopt;
  }
};

/// Parses a pressure file. Throws ParseError(file, line, field) when the "some" line is
/// missing, a line has an unknown kind, or avg10/avg60/avg300/total is missing or
/// malformed. Unknown extra key=value pairs are ignored.
Psi parse_psi(std::string_view text, const std::string& file);

class Fs;
/// Which system-wide pressure file to read.
enum class PsiResource { Memory, Io, Cpu };
/// Reads /proc/pressure/<memory|io|cpu>. Throws IoError (ENOENT: kernel built without
/// PSI; EOPNOTSUPP: CONFIG_PSI_DEFAULT_DISABLED without psi=1) or ParseError.
Psi read_system_psi(const Fs& fs, PsiResource r);

}  // namespace harness::kernel
