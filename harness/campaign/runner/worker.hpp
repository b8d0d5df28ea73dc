#pragma once
// One guest's worker (runner.hpp): runs its cases in schedule order, one at a time. Each case
// is taken over (an interrupted runner's attempt) or gated (the agent answers, the VM is not
// marked unusable) and attempted; an attempt is a loop over its typed state (attempt_state.hpp:
// prepare, submit, follow, import, judge) with the lost/infra rule in lost_rule.hpp. An
// exception inside an attempt is caught once, at the attempt's boundary: an infra failure.
#include "harness/agent/client/client.hpp"
#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/store/campaign_db.hpp"
#include "harness/campaign/runner/preflight.hpp"
#include "harness/campaign/runner/progress.hpp"
#include "harness/campaign/runner/run_options.hpp"
#include "harness/campaign/runner/attempt_state.hpp"
#include "harness/campaign/runner/silence_log.hpp"
#include "harness/pool/pool.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace harness::campaign {

class Worker {
 public:
  /// `instance`: this guest as its engine gives it (outlives the worker); `engine_kind`:
  /// cases.engine_kind of its cases.
  Worker(const Campaign& c, const RunOptions& opt, pool::Instance& instance, const std::string& engine_kind,
         std::optional<bool> overcommitted, std::vector<const ScheduledCase*> cases, Progress& prog,
         std::atomic<int>& attempts, std::atomic<int>& takeovers, VmQualification qual);

  /// Runs every case of this guest. Never throws: a host-level problem (token file, DB) stops
  /// the worker with a note; its cases stay as they are.
  void run();

  /// Set when the host stayed unreachable (its remaining cases stay pending).
  std::string unreachable;
  /// Set when the agent marks its VM unusable after an unclean restoration (the
  /// next case must not inherit the mess); its remaining cases stay pending.
  std::string unusable;

 private:
  /// Runs case `k` until it is an outcome, left infra_failed, or this worker stops (false).
  bool run_case(const ScheduledCase& k);
  /// Before a case on a reused guest: its agent answers and its VM is not marked unusable;
  /// false (unreachable or unusable set) when not.
  bool gate();
  /// Attempt `n` of case `k`; false when the worker must stop (run_steps).
  bool attempt(const ScheduledCase& k, int n);
  /// Takes over the in-flight attempt an interrupted runner left (takeover.hpp); false as attempt().
  bool take_over_case(const ScheduledCase& k);
  /// The attempt's loop over its steps and its boundary for exceptions: false when one left
  /// the attempt in flight after the case was sent (the worker stops; the next run takes it over).
  bool run_steps(Attempt& at);
  void prepare(Attempt& at);
  void boot_fresh(Attempt& at);
  void reboot_through_agent(Attempt& at);
  void submit(Attempt& at);
  void follow(Attempt& at);  // follow.cpp
  void import(Attempt& at);
  void judge(Attempt& at);

  // follow.cpp
  /// The evidence common to every ruling of `at` now (lost_rule.hpp).
  Evidence evidence(const Attempt& at) const;
  /// Asks the engine whether the guest still runs, recording each new answer in the open episode.
  GuestLiveness liveness(Attempt& at, SilenceLog& silence);
  /// Opens a silence episode for a request sent at `asked` (held up to `held`) that got `error`.
  void open_silence(Attempt& at, SilenceLog& silence, const std::string& error,
                    std::chrono::steady_clock::time_point asked, std::int64_t asked_unix_ns,
                    std::chrono::milliseconds held);
  void close_silence(AttemptRecord& a, SilenceLog& silence);
  /// The case's own deadline (PROTOCOL.md "A silent agent"), unix ns.
  std::int64_t case_deadline_unix_ns(const Seen& seen) const;

  /// The guest's boot id now (GET /v1/health boot_id); "" when the agent does not say.
  std::string boot_id_now();
  /// What the engine can tell of a guest whose case vanished (evidence for the operator).
  void put_guest_evidence(AttemptRecord& a);
  void fail(AttemptRecord& a, const std::string& msg);

  const Campaign& c_;
  const RunOptions& opt_;
  pool::Instance& instance_;  ///< this guest as its engine gives it (fresh boot, liveness, console)
  const pool::Guest guest_;   ///< its address
  std::string last_boot_id_;  ///< boot id of the last health answer of the gate (reused guests)
  RanOn ran_on_;              ///< where its cases run (cases.accelerator, host_uri, overcommitted, engine_kind)
  bool fresh_ = false;        ///< a fresh boot through the pool before each case
  bool agent_reboot_ = false; ///< a reboot through the agent before each case
  std::vector<const ScheduledCase*> cases_;
  Progress& prog_;
  std::atomic<int>& attempts_;
  std::atomic<int>& takeovers_;
  results::Db* db_ = nullptr;
  std::unique_ptr<agent::AgentClient> client_;
  VmQualification qual_;  ///< this VM's qualification before scheduling (source of a lost case)
};

/// What a case's fresh boot needs from its spec: spec.variant.kernel_image_dir and
/// spec.variant.cmdline (A/B cases, harness/case/SPEC.md "variant"); empty otherwise.
pool::BootRequest boot_request(const nlohmann::json& spec);

}  // namespace harness::campaign
