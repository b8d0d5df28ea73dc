#pragma once
// The campaign runner (`harness run`): executes the stored, verified schedule against the
// VM agents, one case at a time per VM, VMs in parallel (one worker thread per VM).
//
// Per case: [`harness vm reboot VM` when local and fresh_guest_per_case] -> submit the
// spec -> poll status (phase shown live) -> download the bundle next to the DB -> import
// it in one transaction with schedule.state and its attempts row.
// Rules (study, docs/PROTOCOL.md): a completed case is never run again; OOM, failed or
// partial reclaim and slow cases are `completed` outcomes and kept; a case lost after the
// pressure phase started (guest, agent or case lost, timeout) is the outcome `lost` and
// never rerun automatically; only infra_failed cases (failures before the pressure phase)
// are retried (up to max_infra_retries since the last `harness mark-infra`), every
// attempt recorded. Before any case, every VM's qualification is checked (preflight.hpp). Resume after kill -9: a case
// whose bundle was not imported is run again (or adopted from the agent when the agent
// already finished it), so nothing finished is lost and nothing is stored twice.
#include "harness/campaign/campaign.hpp"
#include "harness/campaign/hosts.hpp"

#include <string>
#include <vector>

namespace harness::campaign {

struct RunOptions {
  std::string db_path;        ///< campaign DB (created and planned if missing)
  std::string hosts_file;     ///< overrides the campaign's provider when set
  std::string self_exe = "/proc/self/exe";  ///< `harness` binary for `vm up` / `vm reboot`
  int progress_tty = -1;      ///< 1 redraw, 0 plain lines, -1 auto (isatty(stderr))
  int request_timeout_ms = 30000;  ///< one agent request (POST, status), ms; a lost POST reply is then asked for
  std::string accelerator;    ///< local guests: --accel (auto|kvm|tcg); "" = $HARNESS_ACCEL,
                              ///< else the campaign's provider.accelerator, else auto
  /// When set, receives the fleet qualification table (preflight.hpp) printed before the run.
  std::string* preflight_out = nullptr;
};

struct RunSummary {
  int planned = 0;
  int completed = 0;
  int infra_failed = 0;  ///< left infra_failed (retries exhausted)
  int lost = 0;          ///< lost after the pressure phase started (an outcome; never rerun)
  int pending = 0;
  int attempts_this_run = 0;
};

/// Plans (first time) or verifies (afterwards) the campaign in the DB, qualifies the
/// fleet (throws PreflightRefused, nothing submitted), then runs every case that is
/// neither completed nor lost and has retries left. Throws ScheduleTampered when the
/// stored schedule's hash changed or differs from `c`'s plan; CampaignError for host
/// setup problems (missing VM in the hosts file, `vm up` failing).
RunSummary run_campaign(const Campaign& c, const RunOptions& opt);

/// The hosts for campaign `c`: opt.hosts_file, else the campaign's hosts file, else
/// local VMs booted with `self_exe vm up --count N --hosts-file <db dir>/<name>.hosts.yaml`.
std::vector<Host> resolve_hosts(const Campaign& c, const RunOptions& opt);

}  // namespace harness::campaign
