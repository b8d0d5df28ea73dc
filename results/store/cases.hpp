#pragma once
// cases (results/schema.sql): one row per case, the latest attempt's record in a campaign DB, the
// one case in a bundle. Read and written as CaseRow; the narrower questions asked of the table
// are case_queries.hpp.
//
// Errors: DbError on any SQLite failure (a refused row included: configuration not an arm,
// duplicate case id).
#include "results/db.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace results {

/// One row of cases (every column but case_key, which import and the large tables use).
/// Units: *_unix_ns wall clock ns since the epoch; bytes. nullopt = NULL (not recorded).
struct CaseRow {
  std::string case_id, campaign, vm, regime;
  std::int64_t repeat = 0;
  std::optional<std::string> triplet_id;
  std::string configuration;  ///< the arm's name
  std::optional<std::int64_t> dose_bytes;
  std::int64_t attempt = 1;
  std::string status;  ///< completed | infra_failed | lost
  std::optional<std::string> error, accelerator, kernel_release, source_commit;
  std::optional<std::int64_t> source_dirty, page_size_bytes, started_unix_ns, ended_unix_ns;
  std::string spec_json;
  std::optional<std::string> environment_json, qualification_json, outcome_json;
  std::optional<std::string> host_uri;        ///< version 3
  std::optional<std::int64_t> overcommitted;  ///< version 3: 1 over capacity, 0 within
  std::optional<std::string> engine_kind;     ///< version 7
};

/// Reads rows of cases by case id, one statement prepared for all of them (a file without a
/// column of a later schema version reads it as NULL).
class CaseReader {
 public:
  explicit CaseReader(Db& db);
  /// The row of `case_id`; nullopt when there is none.
  std::optional<CaseRow> get(const std::string& case_id);

 private:
  Stmt select_;
};

/// The row of `case_id`; nullopt when there is none.
std::optional<CaseRow> read_case(Db& db, const std::string& case_id);

/// The first row in storage order: a bundle's one case; nullopt when the table is empty.
std::optional<CaseRow> first_case(Db& db);

/// Completed cases of arm `configuration` with a dose, by dose and case id (a pilot's).
std::vector<CaseRow> completed_dosed_cases(Db& db, const std::string& configuration);

/// A completed case of A/B variant `variant` (spec_json variant.name) and the host of its
/// attempts row (the runner's; nullopt when it has none).
struct VariantCase {
  CaseRow c;
  std::optional<std::string> attempt_host;
};
/// Completed cases of variant `variant`, by case id.
std::vector<VariantCase> completed_variant_cases(Db& db, const std::string& variant);

/// Inserts `c`; returns its case_key (the key its rows of the large tables take).
std::int64_t insert_case(Db& db, const CaseRow& c);

/// Deletes the row of `case_id` (its rows of the other per-case tables go with it: ON DELETE
/// CASCADE, when foreign keys are on).
void delete_case(Db& db, const std::string& case_id);

/// Sets cases.attempt of `case_id`.
void set_case_attempt(Db& db, const std::string& case_id, std::int64_t attempt);

/// Fills source_commit and source_dirty of `case_id` where they are NULL.
void fill_case_source(Db& db, const std::string& case_id, const std::optional<std::string>& commit,
                      const std::optional<std::int64_t>& dirty);

/// Sets cases.accelerator of `case_id`.
void set_case_accelerator(Db& db, const std::string& case_id, const std::string& accelerator);

/// Sets where `case_id` ran: host_uri, overcommitted and engine_kind (nullopt: NULL).
void set_case_placement(Db& db, const std::string& case_id, const std::optional<std::string>& host_uri,
                        const std::optional<std::int64_t>& overcommitted, const std::optional<std::string>& engine_kind);

/// Sets status and error of `case_id`.
void set_case_status(Db& db, const std::string& case_id, const std::string& status, const std::string& error);

}  // namespace results
