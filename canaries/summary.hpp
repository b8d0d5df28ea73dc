#pragma once
// The canary's end-of-run summary (printed to stdout as JSON; the executor stores it as
// an artifact). Wake delay, service time and response time as defined in timing.hpp;
// quantiles are type 7 (percentile.hpp).
#include "canaries/trace_file.hpp"

#include <nlohmann/json.hpp>

#include <span>

namespace canaries {

/// Summary of recorded requests:
/// {"canary", "period_ms", "requests_recorded", "requests_not_recorded", "incomplete",
///  "deadline_misses", "wake_delay_us": {"p50","p95","p99","max"}, "service_time_us": {...},
///  "response_time_us": {...}, "minflt", "majflt", "nvcsw", "nivcsw" (sums)}.
/// Times in microseconds (double). Quantiles are over completed requests; with none,
/// the quantile objects hold nulls. "incomplete" counts completion_ns == 0.
nlohmann::json summarize(const TraceHeader& header, std::span<const TraceRecord> records);

}  // namespace canaries
