#pragma once
// What a run is asked to do and what it did (runner.hpp run_campaign): its options, the rules
// for a silent agent, and its summary. Kept apart from the runner so that its worker
// (worker.hpp) reads them without including the runner.
#include "harness/campaign/runner/preflight.hpp"

#include <chrono>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

namespace harness::campaign {

/// How long the runner keeps asking an agent that stopped answering (docs/PROTOCOL.md "A
/// silent agent"). The defaults are the rule; unit tests shorten them so no test waits a
/// minute (not exposed on the command line).
struct SilenceRules {
  /// Before the pressure phase started (last phase seen setup or warmup, or none): a
  /// silence this long means the case vanished (infra_failed, or the phase-never-seen rule).
  std::chrono::milliseconds before_pressure{60000};
  /// From the pressure phase on, the runner keeps asking until the case's own deadline:
  /// submission + start lead (3 s) + warmup + pressure + recovery + restoration_timeout_s +
  /// this margin, seconds. **Assumption** (ours; campaigns/README.md Table 1): 300 s covers
  /// the executor's setup and qualification before T0, trace import and the bundle write
  /// under TCG.
  int deadline_margin_s = 300;
};

struct RunOptions {
  std::string db_path;        ///< campaign DB (created and planned if missing)
  std::string hosts_file;     ///< `--hosts FILE`: the hosts engine with this file instead of the campaign's provider
  std::string self_exe = "/proc/self/exe";  ///< the `harness` binary, for engines that run it
  int progress_tty = -1;      ///< 1 redraw, 0 plain lines, -1 auto (isatty(stderr))
  int request_timeout_ms = 30000;  ///< one agent request (POST, status), ms; a lost POST reply is then asked for
  std::string accelerator;    ///< --accel (auto|kvm|tcg) for engines that boot guests; "" =
                              ///< $HARNESS_ACCEL, else the campaign's provider.accelerator, else auto
  /// When set, receives the fleet qualification table (preflight.hpp) printed before the run.
  std::string* preflight_out = nullptr;
  HostWait host_wait;         ///< waiting for agents that do not answer (preflight.hpp)
  /// Schedule case ids not to run: they stay as they are (pending) and count as `skipped`,
  /// not pending. `harness check --baseline-db` passes the baseline cases of an A/B
  /// campaign (the stored baseline DB supplies them; the plan and its SHA-256 are unchanged).
  std::set<std::string> skip_cases;
  std::FILE* out = stderr;    ///< progress, waits and takeover notes
  SilenceRules silence;       ///< a silent agent (PROTOCOL.md); defaults are the rule
};

struct RunSummary {
  int planned = 0;
  int completed = 0;
  int infra_failed = 0;  ///< left infra_failed (retries exhausted)
  int lost = 0;          ///< lost after the pressure phase started (an outcome; never rerun)
  int pending = 0;
  int skipped = 0;       ///< not completed or lost and in RunOptions::skip_cases (not run on purpose)
  int attempts_this_run = 0;  ///< attempts started by this run (takeovers not included)
  int taken_over = 0;         ///< in-flight attempts of an interrupted runner taken over
  /// Hosts that stayed unreachable during the run ("vm1 (URL): ..."); their cases stay pending.
  std::vector<std::string> unreachable;
  /// Reused hosts (not a fresh guest per case) that their agent marks unusable after an
  /// unclean restoration ("vm0 (URL): ..."): no case is sent there until the mark is cleared
  /// (agent API `DELETE /v1/unclean`, after fixing or rebooting the VM); their cases stay
  /// pending. Also stored in the DB (campaign_meta `unusable:<vm>`) for `harness status`.
  std::vector<std::string> unusable;
  std::string engine;    ///< the pool's describe() line after acquire ("" when nothing was left to run)
};

}  // namespace harness::campaign
