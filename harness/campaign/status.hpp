#pragma once
// `harness status DB`: what is done, failed and pending in a campaign DB.
#include "results/db.hpp"

#include <string>

namespace harness::campaign {

/// Human-readable report: campaign name and schedule SHA-256, counts per state overall and
/// per VM, attempts in total, each infra_failed case with its attempts and last error, and
/// the next pending cases. Read-only.
std::string status_report(results::Db& db);

}  // namespace harness::campaign
