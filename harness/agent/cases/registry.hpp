#pragma once
// The agent's registry: the cases it knows and the busy slot, guarded by one mutex, and the
// status answers read from it. Nothing under the mutex touches a file, SQLite or a pipe, so
// /v1/health never waits for a case's files. A case's final state is also written to
// <state-dir>/cases/<id>/status.json (durable_file.hpp), from which a later agent run
// answers for it.
#include "harness/agent/cases/case_state.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace harness::agent {

/// status.json, unclean.json, executor.json and a qualification command's report: at most
/// this many bytes.
inline constexpr std::size_t kStateFileMax = 1 << 20;

struct Registry {
  explicit Registry(std::filesystem::path state_dir) : state_dir(std::move(state_dir)) {}

  const std::filesystem::path state_dir;  ///< absolute; cases under state_dir/cases
  std::mutex mu;
  std::map<std::string, std::shared_ptr<CaseRec>> cases;  ///< under mu
  Busy busy;                                              ///< under mu
  std::size_t downloads = 0;                              ///< under mu: bundle downloads being served
  nlohmann::json last_report;                             ///< under mu: the last qualification report
  /// A case's status changed (state, phase, cancel) or the server stops: `generation` is
  /// bumped and `changed` notified, under mu. A waiting status request sleeps on it.
  std::condition_variable changed;
  std::uint64_t generation = 0;
  std::atomic<bool> stopping{false};  ///< set by Server::stop(); ends every wait

  /// With mu held: a status changed.
  void bump() {
    ++generation;
    changed.notify_all();
  }

  /// <state_dir>/cases/<id>.
  std::filesystem::path case_dir(const std::string& id) const { return state_dir / "cases" / id; }

  /// The status of `c` now (a copy taken under mu, the phase file read without it).
  nlohmann::json status_of(const std::shared_ptr<CaseRec>& c);

  /// GET /v1/cases/{id}?wait_ms=W&state=S&phase=P: the status once its state or phase
  /// differs from `seen_state`/`seen_phase`, the case is final, the agent stops, or `wait`
  /// has passed, whichever comes first (API.md "Waiting for a change"); sleeps on `changed`.
  nlohmann::json status_when_changed(const std::shared_ptr<CaseRec>& c, std::chrono::milliseconds wait,
                                     const std::string& seen_state, const std::string& seen_phase);

  /// A case of this run, or of an earlier agent run (its status.json, read without the
  /// lock; a state there that is not final reads infra_failed), or nullptr. An unreadable
  /// or non-object status.json is logged on stderr and reads as unknown.
  std::shared_ptr<CaseRec> find_case(const std::string& id);

  /// Publishes the final `state` of `c`: status.json is written first (without the lock; a
  /// failure is logged), then the record, and the busy slot is freed if `c` held it. A
  /// cancel requested before the record is updated makes the state Cancelled ("cancelled
  /// by request (<error>)"), status.json then being written again.
  void publish_final(const std::shared_ptr<CaseRec>& c, CaseState state, const std::string& error, int exit_code,
                     const nlohmann::json& restoration);
};

}  // namespace harness::agent
