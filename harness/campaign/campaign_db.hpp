#pragma once
// The campaign database (results/schema.sql, WAL): the stored plan (campaign_meta +
// schedule), the state of every planned case, and every attempt.
// Rules (study, docs/PROTOCOL.md): a completed or lost case is never run again; only
// infra_failed cases are retried; every attempt is recorded; one transaction per imported bundle,
// with schedule.state and the attempts row updated in that same transaction.
#include "harness/campaign/schedule.hpp"
#include "harness/kernel/wall_clock.hpp"
#include "results/db.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <stdexcept>
#include <optional>
#include <string>
#include <vector>

namespace harness::campaign {

/// The stored schedule does not match its preregistered hash (or the campaign file).
class ScheduleTampered : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Stores the plan in an empty campaign DB: campaign_meta keys name, seed, campaign_file,
/// campaign_dir (the absolute folder of the campaign's relative paths, Campaign::base_dir, when
/// known), campaign_yaml, campaign_sha256, schedule_json, schedule_sha256, planned_unix_ns; one arms
/// row per arm of the cases (results/schema.sql version 6: name = configuration, the policy and
/// params of its cases' specs, {} when they disagree, as a pilot's doses do; SHA-256 of the
/// arm's canonical JSON; position in the order of the plan JSON's `arms`, else the study's);
/// and one schedule row per case (state pending). If the DB already holds a plan with the same
/// hash this is a no-op; a different plan throws ScheduleTampered (one campaign per DB). A case
/// whose policy is not registered or whose parameters are wrong, or one arm with two policies,
/// throws std::invalid_argument.
void store_plan(results::Db& db, const Campaign& c, const Schedule& s);

/// True when the DB holds a plan.
bool has_plan(results::Db& db);

/// The campaign of the plan stored in `db` (at `db_path`), as `harness run DB` runs it: the
/// campaign_yaml stored at plan, named "<campaign_file> (as stored in <db_path>)" in errors,
/// its relative paths (variants.*.kernel.image_dir, design.dose_mib.from_pilot) resolved
/// against campaign_dir, the campaign file's folder at plan, so they name what the plan named
/// whatever the working directory now. A DB planned before campaign_dir was stored: the folder
/// of campaign_file when that is absolute, else unknown, and a relative path is refused
/// (CampaignError naming the field, asking for the campaign FILE). std::runtime_error when
/// the DB holds no plan. `pinned_commit: build` is left as stored (resolve_build_pin).
Campaign stored_campaign(results::Db& db, const std::string& db_path);

/// Loads the stored plan and verifies it: SHA-256 of campaign_meta.schedule_json equals
/// campaign_meta.schedule_sha256, and the schedule table rows equal the JSON rows (ids,
/// order, vm, regime, repeat, triplet, configuration, dose). Throws ScheduleTampered
/// naming the first difference.
Schedule load_verified_plan(results::Db& db);

/// Per-case progress read from the schedule and attempts tables.
struct CaseProgress {
  std::string state;        ///< pending | completed | infra_failed | lost
  int attempts = 0;         ///< rows in attempts for the case (runs and operator actions)
  /// Run attempts since the latest mark-infra row (the retry budget restarts there:
  /// PROTOCOL.md assumption, so `harness mark-infra` makes the case runnable again).
  int runs_since_mark = 0;
  int last_attempt = 0;     ///< largest attempts.attempt (0 = none); the next is last_attempt + 1
  /// Attempt number of an attempts row with status 'running' (0 = none): an attempt that a
  /// runner started and had not finished when it stopped (kill -9, crash). The next
  /// `harness run` takes it over (runner.hpp) instead of starting a new attempt.
  int inflight = 0;
};
std::map<std::string, CaseProgress> load_progress(results::Db& db);

/// Progress of one case. Throws std::runtime_error when the case is not in the schedule.
CaseProgress case_progress(results::Db& db, const std::string& case_id);

/// Data of one attempt, written with its outcome.
struct AttemptRecord {
  std::string case_id;
  int attempt = 1;                 ///< 1-based
  std::string host;                ///< agent URL or VM name
  std::int64_t started_unix_ns = 0;
  std::int64_t ended_unix_ns = 0;
  /// attempts.detail_json: what the runner saw, e.g. {"phase": "warmup",
  /// "last_seen_unix_ns": ...} (PROTOCOL.md: the last phase seen is kept). Null = none.
  nlohmann::json detail;
  /// attempts.kind: run | adopted (taken over from an interrupted runner) | interrupted
  /// (the runner was interrupted before the case reached the agent: not counted against
  /// max_infra_retries, ours) | mark-infra | reset-infra.
  std::string kind = "run";
};

/// cases/attempts status and schedule.state of a case that ran its schedule to the end
/// (the executor's "completed"; its outcomes, OOM kills included, are kept).
inline constexpr const char* kCompletedStatus = "completed";
/// Status of an attempts row while its attempt is in flight (written by begin_attempt).
inline constexpr const char* kInflightStatus = "running";
/// schedule.state of a planned case that has not run (store_plan).
inline constexpr const char* kPendingState = "pending";
/// schedule.state and cases/attempts status of a case to run again (docs/PROTOCOL.md).
inline constexpr const char* kInfraFailedStatus = "infra_failed";
/// attempts.status of the operator's `harness mark-infra` and `harness reset-infra` rows;
/// both leave schedule.state infra_failed.
inline constexpr const char* kMarkedInfraStatus = "marked_infra";
inline constexpr const char* kResetInfraStatus = "reset_infra";
/// cases/attempts status and schedule.state of a case lost after its pressure phase began.
inline constexpr const char* kLostStatus = "lost";

/// Writes the attempts row of an attempt that starts now: status 'running', ended NULL,
/// a.started_unix_ns as its real start, a.detail as detail_json. It is replaced by the
/// attempt's outcome row (same case_id, attempt) in the transaction that records it, so a
/// runner killed at any point leaves either the outcome or this row (runner takeover).
void begin_attempt(results::Db& db, const AttemptRecord& a);

/// Replaces detail_json (and kind) of the in-flight row of `a` (phase seen, submitted, takeovers).
void update_inflight(results::Db& db, const AttemptRecord& a);

/// The in-flight attempts row of `case_id` (status 'running'), if any: attempt, host,
/// started_unix_ns, kind and detail as stored.
std::optional<AttemptRecord> inflight_attempt(results::Db& db, const std::string& case_id);

/// Called by import_attempt inside its transaction, after every row of the bundle and the
/// attempts row are written and before the commit, with the case id. The `harness`
/// executable never sets one (nullptr: nothing is called); it is the seam through which a
/// test build of the CLI (tests/vm/campaign/import_pause.cpp) stops a runner exactly there
/// to prove that a kill inside the transaction loses nothing. No environment variable or
/// flag of the shipped binary reaches it.
using ImportObserver = void (*)(const std::string& case_id);
/// Installs `observer` (nullptr removes it). Not thread-safe: set it before any import.
void set_import_observer(ImportObserver observer);

/// Where a case ran, as the runner knows it from the pool (harness/pool/pool.hpp Pool::kind
/// and the Instance's Guest) and the capacity check: written to the case's row on import and
/// for a lost case.
struct RanOn {
  /// The engine's or hosts file's accelerator: of the guest (kvm | tcg | real); when not
  /// empty it becomes cases.accelerator (the hosts file first, else what the guest detected),
  /// and a different value detected in the guest is kept in the attempts row's detail_json
  /// as accelerator_detected. "" = what the guest detected (NULL for a lost case).
  std::string accelerator;
  std::string host_uri;  ///< cases.host_uri: the hypervisor host (Guest::host); "" = not known (NULL)
  /// cases.overcommitted: 1 when the capacity check found that host over cores - 1 or its
  /// memory and the campaign allowed it (provider.overcommit), 0 within capacity; nullopt =
  /// not judged (the hosts engine): NULL.
  std::optional<bool> overcommitted;
  /// cases.engine_kind: the engine that gave the guest (Pool::kind: local-qemu, libvirt,
  /// hosts, ...); "" = not known (NULL).
  std::string engine_kind;
};

/// Imports a bundle for `a` in one transaction: bundle rows, cases.attempt, schedule.state
/// (= the bundle's cases.status), the attempts row and `on` (cases.accelerator, host_uri,
/// overcommitted, engine_kind). cases.source_commit/source_dirty are filled from outcome_json.source
/// {commit, dirty} when the bundle left them NULL. Returns that status ("completed" | "lost" |
/// "infra_failed"). `bundle_case_id`: the id the bundle holds the case under (the agent case
/// id the attempt was submitted as, agent_case_id); "" = a.case_id. Its rows are imported
/// under a.case_id; the bundle file is not modified. Throws results::DbError if the bundle is
/// unreadable or holds no such case.
std::string import_attempt(results::Db& db, const std::string& bundle_path, const AttemptRecord& a,
                           const RanOn& on = {}, const std::string& bundle_case_id = {});

/// Records an attempt that produced no bundle before the pressure phase (agent refused,
/// reboot failed, lost during setup/warmup): attempts row status infra_failed with `error`,
/// schedule.state infra_failed, in one transaction. Rerun while retries are left.
void record_infra_failure(results::Db& db, const AttemptRecord& a, const std::string& error);

/// Why a case was lost (PROTOCOL.md): outcome_json {"lost": {phase, last_seen_unix_ns, reason}}.
struct LostCase {
  std::string phase;                 ///< last phase seen by polling ("" = never seen)
  std::int64_t last_seen_unix_ns = 0;  ///< wall clock of the last successful status poll (0 = never)
  std::string reason;                ///< e.g. "agent lost: ...", "case timed out after 2760 s"
  /// Build of the agent that ran it, from its qualification before scheduling (no bundle
  /// says otherwise): cases.source_commit / source_dirty. Empty / nullopt = unknown.
  std::string source_commit;
  std::optional<bool> source_dirty;
  RanOn ran_on;  ///< where it ran (cases.accelerator, host_uri, overcommitted, engine_kind; "" / nullopt = NULL)
};

/// Records a case lost after the pressure phase started, in one transaction: a `cases` row
/// (status lost, spec_json = `k.spec` with the schedule's case id, outcome_json
/// {"lost": {...}}, source_commit/dirty from `why`), schedule.state lost and the attempts row (status lost, detail_json
/// the same object). A lost case is an outcome: never rerun automatically (study, PROTOCOL.md).
void record_lost(results::Db& db, const ScheduledCase& k, const std::string& campaign, const AttemptRecord& a,
                 const LostCase& why);

/// `harness mark-infra` (PROTOCOL.md: an operator may reclassify a case; audited):
/// reclassifies case `case_id` as infra_failed so that the next `harness run` reruns it, in
/// one transaction: attempts row kind 'mark-infra', status 'marked_infra', detail_json
/// {reason, previous_status, operator, previous_case: {status, error, attempt, outcome_json},
/// override_outcome, original_outcome}; the cases row is kept (status infra_failed, error
/// "mark-infra: REASON") until the rerun replaces it; schedule.state infra_failed. Returns
/// the previous status. A completed or lost case is an outcome (study: "Every case retained
/// its original outcome"): it is reclassified only with `override_outcome`, and then
/// original_outcome keeps what the analysis used (analysis/overrides.hpp: its p99s, or
/// "lost"), for the report's warning and Table 4's sensitivity row. An infra_failed case
/// needs no flag (its retry budget restarts). Throws std::invalid_argument for an unknown
/// case, an empty reason, a pending case, or a completed or lost case without
/// `override_outcome` (the message names the flag).
std::string mark_infra(results::Db& db, const std::string& case_id, const std::string& reason,
                       const std::string& operator_name, bool override_outcome = false);

/// `harness reset-infra` (PROTOCOL.md: audited operator action): makes infra_failed cases
/// runnable again by restarting their retry budget (max_infra_retries counts run attempts
/// after the latest mark-infra or reset-infra row). `case_id` empty = every case whose
/// schedule.state is infra_failed. One transaction: per case an attempts row kind
/// 'reset-infra', status 'reset_infra', host 'operator', detail_json {reason, operator,
/// previous_runs: run attempts since the previous mark/reset}. The plan (campaign_meta,
/// schedule) is not touched, so its SHA-256 stays the same. Returns the case ids reset.
/// Throws std::invalid_argument for an empty reason, an unknown case or a case that is not
/// infra_failed (naming its state).
std::vector<std::string> reset_infra(results::Db& db, const std::string& case_id, const std::string& reason,
                                     const std::string& operator_name);

/// The id a case is submitted under for attempt `attempt` (1-based):
/// "<case_id>.a<attempt>-<tag>" with this DB's db_tag. An agent refuses a case id it has
/// already used (agent/API.md, 409), every attempt must stay distinguishable, and an agent
/// that outlives a DB (a real VM, a guest kept up between runs) must never hand one DB's
/// result to another DB's run of the same campaign (the tag differs).
std::string agent_case_id(const std::string& case_id, int attempt, const std::string& tag);

/// Records (non-empty `why`) or clears (empty) that VM `vm` is unusable after an unclean
/// restoration: campaign_meta key "unusable:<vm>" (shown by `harness status`).
void set_unusable_mark(results::Db& db, const std::string& vm, const std::string& why);

/// 8 hex digits naming this campaign DB: campaign_meta.db_tag, drawn from the OS CSPRNG
/// when the plan is stored (or on first use in an older DB). Not part of the plan hash.
std::string db_tag(results::Db& db);

/// Wall clock, ns since the epoch (harness/kernel/wall_clock.hpp).
using harness::kernel::unix_now_ns;

}  // namespace harness::campaign
