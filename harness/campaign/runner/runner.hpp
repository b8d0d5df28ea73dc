#pragma once
// The campaign runner (`harness run`): executes the stored, verified schedule against the
// VM agents, one case at a time per VM, VMs in parallel (one worker thread per VM). Its rooms
// (the worker, the attempt's typed steps, the lost/infra rule, the silence bookkeeping,
// takeover, adoption, the lock) are in runner/; harness/campaign/README.md says which is where.
//
// Guests come from the campaign's engine, through the pool boundary alone
// (harness/pool/pool.hpp): the engine of provider.kind, or the hosts engine with
// RunOptions::hosts_file. Before anything is stored or booted the engine's capacity is
// judged (harness/pool/capacity.hpp; refused: pool::CapacityError naming host, guests,
// cores and memory; a host that does not answer: pool::PoolError naming it, where `harness
// plan` only says it was not judged). Then acquire (adopt or boot), and one line saying which engine and
// accelerator the run uses (a loud warning when a pilot or confirmatory campaign runs
// under TCG).
//
// Per case: [a fresh boot through the guest's pool::Instance when the engine gives the guest
// one per case (Instance::fresh_boot_per_case; a pool::BootError is an infra failure before
// the case, with the console tail in the attempt's detail_json.boot), or a reboot through the
// agent when the hosts file says reboot_between_cases] -> submit the spec -> poll status
// (phase shown live) -> download the bundle next to the DB -> import it in one transaction
// with schedule.state, its attempts row and where it ran (cases.accelerator, host_uri,
// overcommitted, engine_kind).
// Rules (study, docs/PROTOCOL.md): a completed case is never run again; OOM, failed or
// partial reclaim and slow cases are `completed` outcomes and kept; a case lost after the
// pressure phase started (guest, agent or case lost, timeout) is the outcome `lost` and
// never rerun automatically. An agent that stops answering after the pressure phase
// started is asked again until the case's own deadline (SilenceRules): the bundle is
// imported when it answers; the case is lost only when the engine says the guest is gone,
// its boot id changed, or the deadline passed, with the evidence in the attempt's
// detail_json.silence (episodes, liveness answers, boot ids seen). Only infra_failed
// cases (failures before the pressure phase) are retried (up to max_infra_retries since
// the last `harness mark-infra` or `harness reset-infra`), every attempt recorded.
//
// Before any case (preflight.hpp): every host's agent must answer GET /v1/health (a host
// that does not is waited for with exponential backoff, bounded by RunOptions::host_wait,
// never charged an attempt), then every VM's qualification is checked. Before each case
// on a remote host the same wait applies; a host that stays unreachable leaves its cases
// pending (RunSummary::unreachable).
//
// Takeover after kill -9 or a crash at any point (ours): one runner per DB at a
// time (an flock on DB + ".runner.lock"; a second one is refused naming the first's pid).
// Every attempt's attempts row is written when it starts (status 'running', its real start
// time, detail_json {agent_case_id, runner_pid, submitted, submitted_unix_ns, phase,
// last_seen_unix_ns}, the phase updated as polling sees it) and replaced by its outcome in
// the transaction that records the outcome. The next `harness run` (same command, same
// --db) adopts the guests its campaign's earlier runner booted (the engine's acquire) and
// takes over every 'running' row: the case is followed through the agent's status and its
// bundle imported once (the import is one transaction with the row); the row keeps its
// start time and gets kind 'adopted' and detail_json.runner_interrupted = true with
// takeovers [{took_over_unix_ns, runner_pid, interrupted_runner_pid, phase_seen_before,
// last_seen_unix_ns}]. A case the agent no longer knows is lost or infra_failed by the
// phase seen before the interruption (PROTOCOL.md); one interrupted before it reached the
// agent gets kind 'interrupted' (not counted against max_infra_retries) and is run again.
#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/runner/preflight.hpp"
#include "harness/campaign/runner/run_options.hpp"
#include "harness/pool/capacity.hpp"
#include "harness/pool/host_costs.hpp"
#include "harness/pool/pool.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace harness::campaign {

/// What `harness plan` says of the engine before anything boots.
struct EnginePreview {
  std::string kind;                ///< the engine (the hosts engine when hosts_file is set)
  std::string describe;            ///< its describe() line before acquire
  pool::CapacityVerdict capacity;  ///< harness/pool/capacity.hpp
  bool fresh_boot_per_case = false;  ///< the engine boots each case's guest (wall-time estimate)
  /// What the engine decides before a guest exists (harness/pool/pool.hpp; the hosts engine's
  /// under `--hosts FILE`): where its guests run, whether their kernel is known now.
  pool::Capabilities capabilities;
  /// A hosts file entry of the campaign's VMs says reboot_between_cases (a boot per case too).
  bool reboot_between_cases = false;
  /// Per capacity row (same order): what earlier runs of this engine measured on that host.
  std::vector<pool::HostCosts> costs;
};

/// Opens `c`'s engine (the hosts engine with `hosts_file` when set) and judges its capacity;
/// boots nothing. With a hosts file that exists, every VM of the campaign's design must have an
/// entry: a missing one throws pool::PoolError naming the file and the VMs (what `harness run`
/// would refuse only after qualification started); so does a campaign whose variants boot a
/// kernel image or cmdline when an entry is not `local: true` (the hosts engine cannot boot it,
/// and `harness run` refuses the same after acquire). A host that cannot be asked is not judged
/// (capacity.unreachable; nothing about it is thrown: a lab is planned offline) and `costs`
/// holds what earlier runs measured on each host (harness/pool/host_costs.hpp; read from files
/// here, never from the hosts). `db_path` ("" = a preview) is the DB the plan goes into: guests
/// already running for this campaign and DB are its own, every other running guest another's
/// (counted against the cores). Throws harness::yaml::InputError for a malformed hosts file.
EnginePreview preview_engine(const Campaign& c, const std::string& hosts_file = "", const std::string& db_path = "");

/// Judges capacity (throws pool::CapacityError, nothing stored or booted, when refused),
/// plans (first time) or verifies (afterwards) the campaign in the DB, acquires the guests,
/// qualifies the fleet (throws PreflightRefused, nothing submitted, when a host stays
/// unreachable or a VM is not qualified; when the refusal is for the kernel, a variant that
/// boots one on guests the engine does not boot per case or guests not running the pilot's,
/// the DB goes again if this call created it: new_db_files.hpp), takes over attempts an interrupted runner left in
/// flight, then runs every case that is neither completed nor lost and has retries left.
/// Throws ScheduleTampered when the stored schedule's hash changed or differs from `c`'s
/// plan; pool::PoolError / pool::BootError when the engine cannot give the guests (missing
/// VM in the hosts file, a boot failing, a guest of another campaign running);
/// CampaignError when another runner holds the DB.
RunSummary run_campaign(const Campaign& c, const RunOptions& opt);

}  // namespace harness::campaign
