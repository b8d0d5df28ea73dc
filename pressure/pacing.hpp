#pragma once
// Allocation pacing of pressure-gen on an absolute CLOCK_MONOTONIC schedule (ours).
// Rule: a chunk may start once the allocation after it stays within the budget
// rate x elapsed, i.e. the chunk that brings the total to `bytes_after` starts at
//   t0 + bytes_after / rate.
// Uniform chunks of C bytes: chunk k (0-based) starts at t0 + (k + 1) * C / R. Starts are
// computed from t0 and the byte count, never from the previous chunk's end, so a slow
// chunk (e.g. one that waited on reclaim) does not shift later ones: the generator catches
// up by starting overdue chunks at once.
#include <cstdint>

namespace pressure {

/// Start time (ns) of the chunk after which `bytes_after` bytes are allocated, for a
/// schedule starting at `t0_ns` with rate `rate_bytes_per_s` (> 0). Rounded to the
/// nearest ns.
std::int64_t chunk_start_ns(std::int64_t t0_ns, std::uint64_t bytes_after, double rate_bytes_per_s);

/// Achieved allocation rate, MiB/s: bytes / elapsed (0 when elapsed_ns <= 0).
double achieved_rate_mib_s(std::uint64_t bytes, std::int64_t elapsed_ns);

}  // namespace pressure
