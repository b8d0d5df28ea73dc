#pragma once
// Local guests of a campaign (provider local-qemu) and their takeover after the runner
// was interrupted (issue 16, "Runner takeover"; ours).
//
// The runner boots its guests with `harness vm up` (harness/vm/fleet.hpp keeps each guest's
// state under <cache>/vms/<name>/: qemu pid file, meta.json with the port, token file). It
// adds owner.json there: which campaign and DB the guest serves, the runner's pid, the
// qemu pid, URL and token file. A later `harness run` of the same campaign into the same DB
// (the earlier runner is known to be gone: runner.hpp holds a lock on the DB) adopts a
// running guest whose owner.json names that campaign and DB, when its qemu pid is alive and
// its agent answers GET /v1/health; a guest that does not answer is rebooted
// (`harness vm reboot NAME`: same port and token, fresh disk). A running guest owned by
// anything else is refused, naming its owner. The in-flight case itself is taken over
// through the attempts table (campaign_db.hpp begin_attempt, runner.cpp).
#include "harness/campaign/campaign.hpp"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace harness::campaign {

struct RunOptions;

/// Contents of <guest state dir>/owner.json.
struct GuestOwner {
  std::string campaign;       ///< campaign name
  std::string db;             ///< absolute, normalised path of the campaign DB
  int runner_pid = -1;        ///< `harness run` that booted or last rebooted the guest
  int qemu_pid = -1;          ///< qemu pid at that time
  std::string url;            ///< agent URL (http://127.0.0.1:PORT)
  std::string token_file;
  std::int64_t since_unix_ns = 0;  ///< when the owner record was written, wall clock ns
};

/// Reads owner.json of the guest whose state dir is `state_dir`; nullopt when absent or unreadable.
std::optional<GuestOwner> read_guest_owner(const std::string& state_dir);

/// Records that guest `vm` serves `campaign` / `db` now: writes owner.json with this process
/// as runner and the guest's current qemu pid, URL and token file (-1 / "" before its first
/// boot: the runner writes it before `vm up` too, so that a runner killed during the boot
/// leaves a guest its successor recognises). Throws std::runtime_error when it cannot write.
void write_guest_owner(const std::string& vm, const std::string& campaign, const std::string& db);

/// Stops (`opt.self_exe vm down`) the running guests of `c` whose owner.json names this
/// campaign and DB, and removes their owner.json: an earlier runner was killed after its
/// last case and nothing is left to run.
void stop_owned_local_guests(const Campaign& c, const RunOptions& opt);

/// Removes owner.json of guest `vm` (after the runner stopped it). No error when absent.
void clear_guest_owner(const std::string& vm);

/// The DB path as owner.json records it (absolute, lexically normal).
std::string owner_db_path(const std::string& db);

/// Brings up the local guests of `c` for `opt.db_path`: adopts running guests that an
/// earlier runner of this campaign and DB booted (reboots those whose agent does not
/// answer), boots the missing ones with `opt.self_exe vm up`, records ownership and writes
/// the hosts file <db dir>/<campaign>.hosts.yaml with exactly the campaign's VMs. Prints
/// one line per adopted or rebooted guest to `out`. Returns the hosts file path.
/// Throws CampaignError naming the guest when a running guest belongs to another campaign
/// or DB (or was booted by hand), or when `vm up` / `vm reboot` fails.
std::string prepare_local_guests(const Campaign& c, const RunOptions& opt, std::FILE* out);

}  // namespace harness::campaign
