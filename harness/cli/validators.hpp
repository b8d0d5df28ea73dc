#pragma once
// CLI11 validators shared by the `harness` subcommands: an invalid value is rejected with
// a message naming the flag (exit 64, exit_codes.hpp), never replaced by a default (ours).
// CLI11's own casts accept "-1" for a 64-bit unsigned option (it wraps to
// 2^64-1) and print a 300-digit bound for PositiveNumber; these do neither.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace harness::cli {

/// A decimal integer in [min, max] written with digits only (no sign, no spaces, no
/// exponent), e.g. for seeds, counts, MiB. The message names the accepted range.
inline CLI::Validator integer_in(std::uint64_t min, std::uint64_t max = UINT64_MAX) {
  return CLI::Validator(
      [min, max](std::string& s) -> std::string {
        const auto range = max == UINT64_MAX ? "an integer >= " + std::to_string(min)
                                             : "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
        if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos)
          return "'" + s + "' is not " + range;
        std::uint64_t v = 0;
        for (char c : s) {
          const std::uint64_t d = static_cast<std::uint64_t>(c - '0');
          if (v > (UINT64_MAX - d) / 10) return "'" + s + "' is too large: need " + range;
          v = v * 10 + d;
        }
        if (v < min || v > max) return "'" + s + "' is out of range: need " + range;
        return {};
      },
      max == UINT64_MAX ? "UINT>=" + std::to_string(min)
                        : "UINT in [" + std::to_string(min) + " - " + std::to_string(max) + "]");
}

/// A decimal number > 0 (durations, rates).
inline CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        try {
          std::size_t used = 0;
          const double v = std::stod(s, &used);
          if (used != s.size() || !(v > 0) || v != v) return "'" + s + "' is not a number > 0";
        } catch (const std::exception&) {
          return "'" + s + "' is not a number > 0";
        }
        return {};
      },
      "NUMBER>0");
}

}  // namespace harness::cli
