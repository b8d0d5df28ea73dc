#pragma once
// Which local guest serves which VM of a campaign (ours, issue 59). A campaign names its VMs
// vm0..vmN (design.vms: the strata of its plan, cases.vm); on this machine each runs as a
// local guest, a "slot": the state dir <cache>/vms/vmK/ of harness/vm/fleet.hpp, named as
// `harness vm up` names guests. Before, VM vmI always ran as local guest vmI, so a second
// campaign sharing the cache (a pilot and a CI check on one workstation) found its vm0 to be
// the first one's and was refused. Now each campaign takes free slots, and plans, their
// pinned hashes and cases.vm keep the campaign's names.
//
// The rule (claim_slots), per VM of the campaign in order, under one flock on <cache>/vms.lock:
//   1. the slot whose owner.json names this campaign, DB and VM: an earlier runner of the same
//      command (killed) claimed it; its guest is adopted or booted again there;
//   2. else the slot named like the VM (vm0 for vm0), when free: a campaign alone keeps the
//      names it always had;
//   3. else the free slot vmK of lowest K.
// A slot is free when no qemu runs there and no live runner holds it (the runner pid of its
// owner.json is alive: a runner between its claim and its boot, or within a fresh boot). The
// claim writes owner.json (campaign, DB, VM, this runner: owner.hpp) into each slot before the
// lock is released, so two campaigns claiming at once never get one slot.
#include <string>
#include <vector>

namespace harness::pool::local_guest {

/// One claimed slot: a campaign VM and the local guest that serves it.
struct Slot {
  std::string vm;     ///< the campaign's name of the VM (a stratum): vm0, vm1, ...
  std::string guest;  ///< the local guest (slot) serving it: vmK, state dir <cache>/vms/vmK
};

/// Claims a slot for each of `vms` (in order) for campaign `campaign` and DB `db` by the rule
/// above, in the default cache (harness/vm/paths.hpp cache_root). Returns one Slot per VM, in
/// order. Throws std::runtime_error naming the file when the lock or an owner.json cannot be
/// written.
std::vector<Slot> claim_slots(const std::string& campaign, const std::string& db, const std::vector<std::string>& vms);

/// The slots whose owner.json names `campaign` (and `db`, any spelling of its path, when not
/// ""), in slot order, each with the VM it serves (a record written before issue 59 names no VM:
/// the slot's own name). Never throws for an unreadable record (it names nobody).
std::vector<Slot> slots_of(const std::string& campaign, const std::string& db);

/// A slot a live runner holds while no qemu runs there: claimed and booting, or within a fresh
/// boot. Capacity counts it as that campaign's guest (local_host.hpp local_capacity).
struct HeldSlot {
  std::string guest;     ///< the slot: vmK
  std::string campaign;  ///< its owner record's campaign and DB
  std::string db;
  std::string vm;        ///< the campaign VM it serves
};

/// Every HeldSlot of the cache `cache_dir` ("" = the default), in slot order.
std::vector<HeldSlot> held_not_running(const std::string& cache_dir = "");

/// The campaign VM a slot's owner record names (`owner_vm`, "" in a record written before
/// issue 59: then `slot` itself). Pure.
std::string served_vm(const std::string& owner_vm, const std::string& slot);

}  // namespace harness::pool::local_guest
