#pragma once
// Ownership of a local guest (engine local-qemu): which campaign, DB and campaign VM it serves
// (the guest is a slot of slots.hpp: local guest vm1 may serve a campaign's vm0), so that
// a later `harness run` of the same campaign into the same DB adopts it after the runner was
// killed (ours). Kept as owner.json in the guest's state dir (<cache>/vms/<name>/, written
// by harness/vm/fleet.hpp): campaign, DB, the runner's pid, the qemu pid, URL, token file.
// The runner is known to be gone when a successor runs: harness/campaign/runner/runner.hpp holds
// a lock on the DB.
#include <cstdint>
#include <optional>
#include <string>

namespace harness::pool::local_guest {

/// Contents of <guest state dir>/owner.json.
struct GuestOwner {
  std::string campaign;       ///< campaign name
  std::string db;             ///< absolute, normalised path of the campaign DB
  /// The campaign's name of the VM it serves (its stratum: vm0, vm1, ...; slots.hpp); "" in a
  /// record written before issue 59, which served the VM of its own name.
  std::string guest;
  int runner_pid = -1;        ///< `harness run` that booted or last rebooted the guest
  int qemu_pid = -1;          ///< qemu pid at that time
  std::string url;            ///< agent URL (http://127.0.0.1:PORT)
  std::string token_file;
  std::int64_t since_unix_ns = 0;  ///< when the owner record was written, wall clock ns
};

/// Reads owner.json of the guest whose state dir is `state_dir`; nullopt when absent or unreadable.
std::optional<GuestOwner> read_guest_owner(const std::string& state_dir);

/// Records that local guest `vm` serves `campaign` / `db` as the campaign's VM `serves` ("" =
/// `vm` itself) now: writes owner.json with this process as runner and the guest's current qemu
/// pid, URL and token file (-1 / "" before its first boot: the runner writes it before the boot
/// too, so that a runner killed during the boot leaves a guest its successor recognises).
/// Throws std::runtime_error when it cannot write.
void write_guest_owner(const std::string& vm, const std::string& campaign, const std::string& db,
                       const std::string& serves = "");

/// Removes owner.json of guest `vm` (after the runner stopped it). No error when absent.
void clear_guest_owner(const std::string& vm);

/// The DB path as owner.json records it (absolute, lexically normal).
std::string owner_db_path(const std::string& db);

/// True when `o` names `campaign` and the DB `db` (any spelling of its path).
bool owned_by(const std::optional<GuestOwner>& o, const std::string& campaign, const std::string& db);

}  // namespace harness::pool::local_guest
