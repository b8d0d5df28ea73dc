#pragma once
// The policy of `harness check` once its options are parsed (ours; docs/CI.md): which stored
// DB may serve as the baseline (`--baseline-db`) or be judged again (`--judge`), and the
// judgement itself: the assertions, for an A/B campaign the environments of the two sides
// (drift refused unless allowed) and the candidate/baseline metric comparison, the JUnit and
// Markdown files, and the verdict the CLI maps to its exit code (0 ok, 1 finding, 2 cannot
// judge, 5 inconclusive: harness/cli/exit_codes.hpp). Nothing here prints: render_judgement() gives the text.
#include "analysis/compare/regression.hpp"
#include "harness/campaign/check/ab_environment.hpp"
#include "harness/campaign/check/ab_report.hpp"
#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/check/check_kcidb.hpp"
#include "harness/campaign/check/judgement.hpp"
#include "results/db.hpp"
#include "results/provenance.hpp"

#include <optional>
#include <set>
#include <string>

namespace harness::campaign {

/// Why a DB named to `harness check` cannot be used.
enum class DbRefusalReason {
  none,
  other_settings,      ///< --baseline-db: its campaign's comparison settings differ (ab_settings.hpp)
  no_baseline_case,    ///< --baseline-db: no completed baseline case
  other_commit,        ///< --baseline-db: its baseline cases ran another harness commit
  no_case,             ///< --judge: no completed case
  other_campaign,      ///< --judge: its cases are of another campaign (cases.campaign)
  no_plan,             ///< --judge: no stored campaign YAML that parses, so no design to compare
  other_design,        ///< --judge: its stored plan is of another design than FILE's
};

/// A refusal and the complete text `harness check` prints for it on stderr (one or more
/// lines, each ending in '\n', starting "harness check: --baseline-db BASE" or
/// "harness check: --judge DB"). reason none and text "" when the DB can be used.
struct DbRefusal {
  DbRefusalReason reason = DbRefusalReason::none;
  std::string text;
  bool refused() const { return reason != DbRefusalReason::none; }
};

/// Whether `base` (opened from `base_path`) can give campaign `c`'s check its baseline cases,
/// tested in this order: the comparison settings of both stored YAMLs as written are equal
/// (every differing setting listed with both values and both digests); it holds a completed
/// baseline case; and, when `harness_commit` is given (a check that will run cases, without
/// --allow-env-drift), its baseline cases recorded exactly that commit ("+dirty" appended
/// for a dirty build). Throws std::runtime_error when `base` holds no campaign YAML, and
/// CampaignError when that YAML does not parse.
DbRefusal baseline_db_refusal(results::Db& base, const std::string& base_path, const Campaign& c,
                              const std::optional<std::string>& harness_commit);

/// Whether `db` (opened from `db_path`) can be judged with campaign `c` (`--judge`): it holds
/// completed cases, all of campaign `c.name`, and its stored plan (campaign_meta campaign_yaml,
/// read relative to campaign_meta campaign_file) has FILE's design: the same design.kind,
/// the same variants (baseline and candidate, as variant_lines() says them) and the same
/// comparison settings (ab_settings.hpp; tolerances, assertions and runner may differ). A
/// design refusal names both values of every difference. Throws results::DbError on SQLite
/// errors.
DbRefusal judged_db_refusal(results::Db& db, const std::string& db_path, const Campaign& c);

/// The case ids of `c`'s plan whose variant is the baseline (spec variant.name): the cases a
/// check with --baseline-db does not run. Empty for other designs.
std::set<std::string> baseline_case_ids(const Campaign& c);

/// What `harness check` judges once the cases are in (or, with --judge, without running any).
struct JudgeRequest {
  std::string db;                     ///< path of the DB whose cases are judged (A/B: the candidate's)
  std::string baseline_db;            ///< A/B: the baseline's cases from this path ("" = `db`)
  std::string junit, markdown;        ///< output paths ("" = none; A/B Markdown default: next to `db`)
  bool allow_drift = false;           ///< --allow-env-drift
  std::set<std::string> skip_cases;   ///< cases not run on purpose (the baseline's, with --baseline-db)
  /// A/B: verdict rule and looks of the comparison (analysis/compare/regression.hpp; --until-decided:
  /// VerdictRule::decide and the schedule's looks, analysis/stats/sequential.hpp).
  analysis::ComparisonRule rule{};
  KcidbOptions kcidb{};               ///< --kcidb FILE and its options (path "" = no KCIDB file)
};

/// Judges `db` (the cases at in.db) under campaign `c`: evaluates the assertions; for an A/B
/// campaign reads both sides' environments from `baseline` (nullptr = `db`) and `db`, refuses
/// on drift the campaign did not ask for when the baseline is another DB and drift is not
/// allowed (outcome.refusal; JUnit when asked and Markdown always are still written), else
/// adds a warning per drift and compares the variants (analysis/compare/regression.hpp; a failure is
/// `error`, and then nothing is written). Writes JUnit to in.junit when given, Markdown to
/// in.markdown (A/B default: default_markdown_path(in.db)) and KCIDB JSON to in.kcidb.path when
/// given (check_kcidb.hpp; the kernels of `db`'s cases and of `baseline`'s baseline cases).
/// `prov` goes into every file.
/// Throws std::runtime_error when a file cannot be written, results::DbError on SQLite errors.
Judgement judge(const Campaign& c, const JudgeRequest& in, results::Db& db, results::Db* baseline,
                const results::Provenance& prov);

/// What `harness check` prints for a judgement: `out` for stdout (one summary line per assertion,
/// assertions.hpp assertion_summary, with its first three failures and how many more, and where
/// every case's value is: the Markdown and JUnit files written; the environment table and
/// warnings, the metric table and its REGRESSION / INCONCLUSIVE / NO DATA lines, "markdown
/// summary: PATH", the closing count line) and `err`
/// for stderr (the drift refusal, or "harness check: cannot compare the variants: ...").
struct JudgementText {
  std::string out, err;
};
JudgementText render_judgement(const Judgement& j);

}  // namespace harness::campaign
