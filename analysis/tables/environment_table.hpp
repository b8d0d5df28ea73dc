#pragma once
// The environment part of Table 1: what qualification and the executor recorded on each
// analysed case's VM (cases.environment_json, cases.qualification_json, the SQLite canary's
// artifact canary-sqlite.json): kernel, clocksource, MGLRU, THP, swappiness, memory, page
// size, CPUs, PSI and zram configuration, SQLite canary rows and payload. Sizes in MiB
// (memory) or bytes/KiB where the quantity is small (page size, payload), as labelled.
#include <string>
#include <utility>
#include <vector>

namespace analysis {

/// (setting, value) rows for `case_ids` of the DB at db_path. A setting with the same value
/// on every case shows that value; one that differs shows "varies: a (n cases); b (m cases)";
/// one no case recorded shows "not recorded" (older DBs, a canary that predates the field).
/// Errors: results::DbError when the DB cannot be read.
std::vector<std::pair<std::string, std::string>> environment_rows(const std::string& db_path,
                                                                  const std::vector<std::string>& case_ids);

/// The report warning for cases that ran on an overcommitted hypervisor host
/// (cases.overcommitted = 1: provider.overcommit allowed more guest vCPUs than cores - 1
/// or more guest memory than available, harness/pool/capacity.hpp); "" when none did or the
/// DB predates the column. Errors: results::DbError when the DB cannot be read.
std::string overcommit_warning(const std::string& db_path);

}  // namespace analysis
