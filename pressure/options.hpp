#pragma once
// Command line of pressure-gen (the contract with the case executor):
//   pressure-gen --allocation-mib M --rate-mib-s R --active-set-mib A
//                --contents structured|random --seed N [--chunk-mib 1] [--duration-s S]
//                [--active-set-slide-mib-s V]
//   pressure-gen --dump-sample FILE [--sample-mib 64] --contents C --seed N
// The executor places the process in the bg cgroup before exec; nothing cgroup-related here.
#include "pressure/page_contents.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace pressure {

struct Options {
  std::int64_t allocation_mib = 0;    ///< total allocation, MiB (required unless --dump-sample)
  double rate_mib_s = 0;              ///< target allocation rate, MiB/s (required unless --dump-sample)
  std::int64_t active_set_mib = -1;   ///< active set, MiB (required unless --dump-sample)
  std::string contents;               ///< structured | random (required)
  std::uint64_t seed = 0;             ///< page-content seed (required)
  bool seed_given = false;
  std::int64_t chunk_mib = 1;         ///< allocation chunk, MiB
  double active_set_slide_mib_s = 0;  ///< speed of the active window through the allocation, MiB/s (0 = fixed)
  std::optional<double> duration_s;   ///< run length, s (default: until SIGTERM/SIGINT)
  std::string dump_sample;            ///< write page contents to this file and exit
  std::int64_t sample_mib = 64;       ///< size of the sample, MiB
};

/// Registers the flags above on `app` (nothing is required at the CLI11 level; validate()
/// checks requirements so that messages are uniform).
void add_options(CLI::App& app, Options& o);

/// Checks the flags; throws std::invalid_argument naming the flag: missing required
/// flag; --allocation-mib not in [1, 1048576]; --rate-mib-s not in (0, 100000];
/// --active-set-mib < 0 or > --allocation-mib; --chunk-mib not in [1, --allocation-mib];
/// --active-set-slide-mib-s not in [0, 100000]; --duration-s <= 0; --contents not structured|random; --sample-mib not in [1, 65536].
void validate(Options& o);

}  // namespace pressure
