#pragma once
// `harness status DB`: what is done, failed and pending in a campaign DB.
#include "results/db.hpp"

#include <cstdint>
#include <string>

namespace harness::campaign {

/// Human-readable report: campaign name and schedule SHA-256, counts per state overall and
/// per VM, attempts in total, elapsed time and an ETA (progress_line), each infra_failed case
/// with its attempts and `last_attempt_error`, and the next pending cases. Read-only. `now_unix_ns`:
/// the wall clock to measure against (0 = now).
std::string status_report(results::Db& db, std::int64_t now_unix_ns = 0);

/// The elapsed-time and ETA lines of status_report (ours): elapsed = from the first attempt's
/// start to `now_unix_ns` (to the last end when nothing is pending or in flight); a finished
/// case's duration = its latest attempt's start to end (completed or lost); ETA = the largest
/// over VMs of (that VM's pending cases x the mean duration of finished cases), the VMs
/// running in parallel, one case at a time each. "ETA: not known yet" before any case finished.
std::string progress_lines(results::Db& db, std::int64_t now_unix_ns);

}  // namespace harness::campaign
