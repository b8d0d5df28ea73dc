#pragma once
// What a finished executor left (harness/agent/API.md "A case's states", "Unclean
// restoration"): the case's state from its bundle's cases row and the restoration verdict
// from its restoration row, and whether the VM must be marked unclean.
#include "harness/agent/cases/case_state.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace harness::agent {

/// The verdict of one case's bundle.
struct BundleOutcome {
  CaseState state = CaseState::InfraFailed;  ///< Completed, Lost or InfraFailed
  std::string error;                         ///< "" = none
  /// {"clean": bool|null, "problems": [...], "ran": bool} (no "ran" when there is no verdict)
  nlohmann::json restoration = nullptr;
  bool unclean = false;  ///< the VM must not run another case until the operator clears it
  nlohmann::json problems = nlohmann::json::array();  ///< the mark's problems when unclean
};

/// Reads `bundle` (a results DB, read-only) for case `id` of an executor that exited with
/// `exit_code` (in the texts only; -1 = unknown). No bundle, an unreadable one: InfraFailed
/// and unclean ("no restoration verdict ..."); no cases row: InfraFailed with an error; no
/// restoration row: clean null, ran false, not unclean (the executor set nothing up);
/// restoration.clean = 0: unclean with the verdict's problems. Never throws.
BundleOutcome read_bundle(const std::string& id, const std::filesystem::path& bundle, int exit_code);

}  // namespace harness::agent
