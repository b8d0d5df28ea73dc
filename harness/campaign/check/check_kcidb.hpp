#pragma once
// `harness check --kcidb FILE` (ours, issue 59; docs/CI.md "Submitting to KernelCI"): the
// judgement written as KCIDB I/O JSON, the format KernelCI's common database (KCIDB) collects
// from many labs. Schema: KCIDB I/O version 5.3 (kcidb-io, kcidb_io/schema/v05_03.py); the
// subset written here is kcidb_v5_3.schema.json beside this file, and a unit test validates a
// real file against it (tests/unit/check/kcidb_validate.py).
//
// What goes where:
// - checkouts, builds: one of each per guest kernel the judged cases recorded (uname -r, -v,
//   -m; cases whose kernel is not recorded share one "not recorded" kernel). The harness knows
//   a kernel only as the guest reported it: a git URL and commit are the CI job's to give
//   (KcidbOptions), for the kernel under test (an A/B campaign's candidate kernel, else every
//   kernel). Ids depend on the kernel alone, so runs on one kernel share them.
// - tests, each against the build of the kernel its cases ran:
//   - per assertion and kernel, path reclaim_harness.<kind>: FAIL when a case of that kernel
//     failed it, MISS when it checked no case (no completed case), else PASS; number = the worst
//     measured value in its unit; misc = every case's value;
//   - A/B, per metric, against the candidate's kernel, path reclaim_harness.regression.<metric>:
//     FAIL for a regression, PASS ok (and ok-decided), DONE reported or inconclusive (the check
//     exits 5: more pairs would decide), SKIP no data; number = the ratio candidate / baseline;
//     misc = interval, level, means, pairs, tolerance, verdict, the baseline's build;
//   - A/B refused for environment drift: path reclaim_harness.environment, ERROR.
//   Test ids hold this judgement's run key (SHA-256 of the origin, campaign, judged cases and
//   the provenance's time and command line), so every check is a run of its own.
// - a synthetic DB's file: every object's comment starts with results::synthetic_banner() and
//   its misc has `synthetic`.
#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/store/campaign_db.hpp"
#include "harness/error/expected.hpp"
#include "results/provenance.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace harness::campaign {

struct Judgement;  // judgement.hpp

/// The KCIDB I/O schema version the file follows (kcidb-io kcidb_io/schema/v05_03.py).
inline constexpr int kKcidbMajor = 5;
inline constexpr int kKcidbMinor = 3;

/// What the CI job adds to a KCIDB file (the `--kcidb-*` options of `harness check`).
struct KcidbOptions {
  std::string path;             ///< --kcidb FILE ("" = none written)
  /// --kcidb-origin: the CI system's name in KCIDB ([a-z0-9_]+, agreed with KCIDB's
  /// maintainers), the prefix of every id.
  std::string origin = "reclaim_harness";
  std::string git_url;          ///< --kcidb-git-url: https:// URL of the kernel under test's repository ("" = unknown)
  std::string git_commit;       ///< --kcidb-git-commit: its full commit hash, 40 hex ("" = unknown)
  std::string artifacts_url;    ///< --kcidb-artifacts-url: where the JUnit and Markdown files are published ("" = nowhere)
};

/// Whether the KCIDB options are usable, or the Problem (the option's name and the rule, KCIDB
/// I/O 5.3): an origin that is not [a-z0-9_]+, a commit that is not 40 lowercase hex digits, a
/// git URL or artifacts URL that is not https://.
Checked check_kcidb_options(const KcidbOptions& o);

/// What the KCIDB file is made from: the judgement, the campaign, the provenance and the
/// kernels the judged cases recorded (case_kernels of the judged DB and, with --baseline-db,
/// of the baseline's), and the JUnit / Markdown files written ("" = none).
struct KcidbInput {
  const Campaign* campaign = nullptr;
  const Judgement* judgement = nullptr;
  const results::Provenance* provenance = nullptr;
  std::vector<CaseKernel> cases;
  std::string junit_path, markdown_path;
};

/// The KCIDB I/O document (object keys in the order written). Pure.
nlohmann::ordered_json kcidb_document(const KcidbInput& in, const KcidbOptions& o);

/// Writes kcidb_document to o.path (2-space indented, final newline). Throws std::runtime_error
/// naming the path when it cannot be written.
void write_kcidb(const KcidbInput& in, const KcidbOptions& o);

}  // namespace harness::campaign
