#pragma once
// The import of an attempt's bundle into the campaign DB: the bundle's rows, the case's attempt
// and where it ran, schedule.state and the attempts row, in one transaction
// (results::import_bundle copies the rows).
#include "harness/campaign/store/attempts.hpp"
#include "results/db.hpp"

#include <optional>
#include <string>

namespace harness::campaign {

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

}  // namespace harness::campaign
