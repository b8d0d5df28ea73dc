// Which local guest serves which campaign VM (slots.hpp).
#include "harness/pool/local_guest/slots.hpp"

#include "harness/pool/local_guest/owner.hpp"
#include "harness/vm/fleet.hpp"
#include "harness/vm/paths.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

namespace fs = std::filesystem;

namespace harness::pool::local_guest {
namespace {

/// The exclusive flock of a claim; released when destroyed (or when the process dies).
class ClaimLock {
 public:
  explicit ClaimLock(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0) throw std::runtime_error("cannot open the slot lock " + path + ": " + std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd_);
      throw std::runtime_error("cannot lock " + path + ": " + std::strerror(e));
    }
  }
  ~ClaimLock() { ::close(fd_); }
  ClaimLock(const ClaimLock&) = delete;
  ClaimLock& operator=(const ClaimLock&) = delete;

 private:
  int fd_ = -1;
};

/// One slot as a claim sees it.
struct SlotState {
  std::string name;
  bool running = false;
  std::optional<GuestOwner> owner;
};

/// K of a slot named vmK (-1 for any other name).
int slot_index(const std::string& name) {
  if (name.size() < 3 || name.rfind("vm", 0) != 0) return -1;
  for (std::size_t i = 2; i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return -1;
  if (name.size() > 3 && name[2] == '0') return -1;
  return std::stoi(name.substr(2));
}

bool runner_alive(int pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

/// Every slot of the cache: a state dir vmK (with a guest's meta.json, or only the owner.json
/// of a claim), by K.
std::map<int, SlotState> scan(const fs::path& vms_dir, const std::string& cache_dir = "") {
  std::map<int, SlotState> out;
  std::map<std::string, bool> running;
  for (const auto& g : harness::vm::fleet_list(cache_dir)) running[g.name] = g.running;
  if (!fs::exists(vms_dir)) return out;
  for (const auto& e : fs::directory_iterator(vms_dir)) {
    const std::string name = e.path().filename().string();
    const int k = slot_index(name);
    if (k < 0 || !e.is_directory()) continue;
    out[k] = SlotState{name, running.count(name) && running[name], read_guest_owner(e.path().string())};
  }
  return out;
}

bool is_free(const SlotState& s) { return !s.running && !(s.owner && runner_alive(s.owner->runner_pid)); }

}  // namespace

std::string served_vm(const std::string& owner_vm, const std::string& slot) { return owner_vm.empty() ? slot : owner_vm; }

std::vector<Slot> claim_slots(const std::string& campaign, const std::string& db, const std::vector<std::string>& vms) {
  const fs::path cache = harness::vm::cache_root("");
  ClaimLock lock((cache / "vms.lock").string());
  auto slots = scan(cache / "vms");
  std::set<int> taken;
  std::vector<Slot> out(vms.size());
  std::vector<std::size_t> open;  // VMs rule 1 did not place
  for (std::size_t i = 0; i < vms.size(); ++i) {
    out[i].vm = vms[i];
    for (const auto& [k, s] : slots)
      if (!taken.count(k) && owned_by(s.owner, campaign, db) && served_vm(s.owner->guest, s.name) == vms[i]) {
        out[i].guest = s.name;
        taken.insert(k);
        break;
      }
    if (out[i].guest.empty()) open.push_back(i);
  }
  auto usable = [&](int k) { return !taken.count(k) && (!slots.count(k) || is_free(slots.at(k))); };
  for (std::size_t i : open) {  // rule 2: the VM's own name, when free
    const int own = slot_index(vms[i]);
    if (own >= 0 && usable(own)) {
      out[i].guest = vms[i];
      taken.insert(own);
    }
  }
  for (std::size_t i : open) {  // rule 3: the lowest free vmK
    if (!out[i].guest.empty()) continue;
    int k = 0;
    while (!usable(k)) ++k;
    out[i].guest = "vm" + std::to_string(k);
    taken.insert(k);
  }
  for (const auto& s : out) write_guest_owner(s.guest, campaign, db, s.vm);  // the claim, before the lock goes
  return out;
}

std::vector<HeldSlot> held_not_running(const std::string& cache_dir) {
  std::vector<HeldSlot> out;
  for (const auto& [k, s] : scan(fs::path(harness::vm::cache_root(cache_dir)) / "vms", cache_dir))
    if (!s.running && s.owner && runner_alive(s.owner->runner_pid))
      out.push_back({s.name, s.owner->campaign, s.owner->db, served_vm(s.owner->guest, s.name)});
  return out;
}

std::vector<Slot> slots_of(const std::string& campaign, const std::string& db) {
  std::vector<Slot> out;
  for (const auto& [k, s] : scan(fs::path(harness::vm::cache_root("")) / "vms")) {
    if (!s.owner || s.owner->campaign != campaign || (!db.empty() && !owned_by(s.owner, campaign, db))) continue;
    out.push_back({served_vm(s.owner->guest, s.name), s.name});
  }
  return out;
}

}  // namespace harness::pool::local_guest
