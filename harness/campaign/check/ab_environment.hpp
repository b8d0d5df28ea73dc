#pragma once
// The environment the baseline's and the candidate's cases of an A/B campaign ran in, as the
// cases recorded it, and what differs between the two (ours; docs/CI.md "What the check judges"):
//
//   accelerator        cases.accelerator
//   kernel release     cases.kernel_release (uname -r of the guest)
//   kernel cmdline     environment_json.cmdline, without the guest's name and accelerator
//                      (harness.name=, harness.accelerator=: the stratum and a field of its own)
//   knobs as booted    environment_json swappiness, thp_enabled, mglru_enabled, clocksource
//                      (read before the variant writes anything)
//   knob K read back   outcome_json.variant.settings.K.readback (what the variant wrote, read back)
//   harness commit     cases.source_commit (+dirty)
//   host engine        where the runner got the guest: cases.engine_kind (schema version 7). A
//                      case of an older DB, which did not record it, is guessed as before:
//                      from cases.host_uri when the DB has it, as the pool tells it
//                      (harness/pool/engine.hpp engine_kind_of_host; a hosts-file hypervisor
//                      written as a URI is then taken for libvirt), else from the attempt's
//                      agent URL (loopback -> local guest, other -> remote agent)
//
// A difference is asked for when the campaign's variants differ in what causes it: the
// kernel release when their kernel.image_dir differ; the command line in the variants' own
// cmdline parameters (so it is compared without them); the knobs as booted when the variants
// boot differently (kernel or cmdline); a knob read back when the variants write it differently.
// Everything else (accelerator, harness commit, host engine, and the rest) is never asked for.
#include "harness/campaign/model/campaign.hpp"
#include "harness/error/expected.hpp"
#include "results/db.hpp"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace harness::campaign {

/// What one variant's completed cases recorded, each field as its distinct values.
struct VariantEnvironment {
  std::string variant;  ///< "baseline" | "candidate"
  std::string db;       ///< the DB it was read from
  int cases = 0;        ///< completed cases of that variant read
  /// field (names above; "knob K read back" per setting K) -> distinct values, sorted.
  std::map<std::string, std::set<std::string>> fields;
  /// cmdline words per case, harness.name= and harness.accelerator= removed (the variants' own
  /// parameters are removed only when comparing).
  std::set<std::vector<std::string>> cmdline_words;
  /// setting K -> distinct values read before the variant wrote it (outcome_json ... before).
  std::map<std::string, std::set<std::string>> knob_before;
};

/// Reads the completed cases of variant `variant` (spec_json variant.name) from `db`.
/// Missing values are recorded as "not recorded". Throws results::DbError on SQLite errors.
VariantEnvironment read_variant_environment(results::Db& db, const std::string& variant, const std::string& db_label);

/// One compared field.
struct EnvironmentField {
  std::string field;
  std::string baseline, candidate;  ///< the values, "; "-joined ("(no case)" when a side has none)
  bool differs = false;
  bool asked = false;               ///< the variants' settings explain the difference
  std::string why;                  ///< when asked: which setting
};

/// Both environments and the field-by-field comparison.
struct EnvironmentComparison {
  VariantEnvironment baseline, candidate;
  std::vector<EnvironmentField> fields;  ///< in the order of the header's list
  /// Differing fields the campaign did not ask for.
  std::vector<EnvironmentField> unrequested() const;
};

/// Compares the two environments under campaign `c`'s variants (rules in the header).
EnvironmentComparison compare_environments(const VariantEnvironment& baseline, const VariantEnvironment& candidate,
                                           const Campaign& c);

/// The warning `harness check` prints (and writes into JUnit and Markdown) when the
/// candidate's variant sets something the baseline's does not, yet both sides recorded the
/// same kernel release, the same command line and, for every knob the candidate writes, the
/// value the baseline runs with (its own read-back, else the value the candidate's guest had
/// before the write): the comparison is then A/A, whatever the campaign says. "" otherwise.
std::string same_environment_warning(const EnvironmentComparison& e, const Campaign& c);

/// Text table (field, baseline, candidate, note) for stdout.
std::string environment_text(const EnvironmentComparison& e);
/// Markdown section "Environment" with the same table (differences not asked for in bold).
std::string environment_markdown(const EnvironmentComparison& e);

/// Passed when the environments have no unrequested difference; else the refusal `harness
/// check --baseline-db` prints (each field with both values), naming --allow-env-drift.
Checked check_environment_drift(const EnvironmentComparison& e, const std::string& baseline_db);

/// The harness commit(s) a DB's completed `variant` cases recorded (source_commit, "+dirty"
/// appended when dirty), for the check before a --baseline-db run.
std::set<std::string> recorded_commits(results::Db& db, const std::string& variant);

}  // namespace harness::campaign
