#pragma once
// One cgroup v2 directory: create/remove, controllers, processes, memory knobs,
// memory.stat/events/pressure, memory.reclaim, cgroup.kill (Documentation/admin-guide/
// cgroup-v2.rst). Reads throw IoError/ParseError; writes return WriteResult (errno as data).
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/kernel/fs.hpp"
#include "harness/kernel/memory_stat.hpp"
#include "harness/kernel/psi.hpp"
#include "harness/kernel/size.hpp"

namespace harness::kernel {

/// Outcome of one write to memory.reclaim (docs/DESIGN.md "Controller": request bytes,
/// start/end times, duration, errno). EAGAIN = the kernel reclaimed less than asked
/// (6.1: also after 16 passes without progress), EINTR = interrupted by a signal.
struct ReclaimResult {
  std::uint64_t request_bytes = 0;  ///< bytes asked for
  std::string written;              ///< text written, e.g. "96M"
  WriteResult write;                ///< errno as data
  std::int64_t start_ns = 0;        ///< CLOCK_MONOTONIC before write(2), ns
  std::int64_t end_ns = 0;          ///< CLOCK_MONOTONIC after write(2) returned, ns
  std::int64_t duration_ns() const { return end_ns - start_ns; }
};

/// Default mount point of the cgroup v2 hierarchy, relative to the Fs root.
inline constexpr const char* kCgroup2Mount = "sys/fs/cgroup";

/// A cgroup directory under an Fs root. Holds no file descriptors; cheap to copy.
class Cgroup {
 public:
  /// `dir` relative to the Fs root, e.g. "sys/fs/cgroup/bg".
  Cgroup(Fs fs, std::string dir);
  /// The root cgroup at `mount` (default "sys/fs/cgroup").
  static Cgroup root(const Fs& fs, std::string mount = kCgroup2Mount);
  /// Child `name` (one path component; throws std::invalid_argument on '/' or "..").
  Cgroup child(const std::string& name) const;

  const Fs& fs() const { return fs_; }
  const std::string& dir() const { return dir_; }
  /// Path of a file of this cgroup, relative to the Fs root.
  std::string file(const std::string& name) const { return dir_ + "/" + name; }
  bool exists() const;

  // --- lifecycle -----------------------------------------------------------
  /// mkdir. EEXIST is returned as err (caller decides whether that is fine).
  WriteResult create() const;
  /// rmdir. EBUSY while processes remain (write kill() first and wait for !populated).
  WriteResult remove() const;

  // --- controllers and processes ------------------------------------------
  /// cgroup.controllers: controllers available to this cgroup. Throws IoError.
  std::vector<std::string> controllers() const;
  /// cgroup.subtree_control: controllers enabled for children.
  std::vector<std::string> subtree_control() const;
  /// Writes "+a +b" to cgroup.subtree_control. ENOENT when a controller is not
  /// available (e.g. memory bound to cgroup v1); EBUSY with processes in this cgroup
  /// (no-internal-process rule).
  WriteResult enable_controllers(const std::vector<std::string>& names) const;
  /// Writes pid to cgroup.procs (moves the whole process).
  WriteResult move_pid(pid_t pid) const;
  /// cgroup.procs, as pids in file order.
  std::vector<pid_t> procs() const;
  /// cgroup.events (populated, frozen).
  CgroupEvents events() const;
  /// Writes "1" to cgroup.kill (5.14+): SIGKILL to every process in the subtree.
  WriteResult kill() const;

  // --- memory knobs (bytes) -------------------------------------------------
  WriteResult set_memory_max(const MemoryLimit& l) const;
  WriteResult set_memory_high(const MemoryLimit& l) const;
  WriteResult set_memory_low(std::uint64_t bytes) const;
  WriteResult set_memory_min(std::uint64_t bytes) const;
  WriteResult set_memory_swap_max(const MemoryLimit& l) const;
  /// memory.oom.group: 1 = the OOM killer kills the whole cgroup.
  WriteResult set_memory_oom_group(bool on) const;
  MemoryLimit memory_max() const;
  MemoryLimit memory_high() const;
  std::uint64_t memory_low_bytes() const;
  std::uint64_t memory_min_bytes() const;
  MemoryLimit memory_swap_max() const;
  /// memory.current in bytes.
  std::uint64_t memory_current_bytes() const;
  /// memory.swap.current in bytes.
  std::uint64_t memory_swap_current_bytes() const;
  MemoryStat memory_stat() const;
  MemoryEvents memory_events() const;
  /// memory.pressure (PSI some/full, total in us).
  Psi memory_pressure() const;
  Psi io_pressure() const;
  Psi cpu_pressure() const;

  /// One write of `bytes` to memory.reclaim, with a unit suffix (format_size_suffix:
  /// 96 MiB -> "96M"), timed on CLOCK_MONOTONIC. Synchronous: returns when the kernel
  /// has finished. Never throws for kernel errors (see ReclaimResult).
  ReclaimResult reclaim(std::uint64_t bytes) const;

 private:
  Fs fs_;
  std::string dir_;
};

/// Parses a whitespace-separated list (cgroup.controllers, cgroup.subtree_control).
std::vector<std::string> parse_word_list(std::string_view text);
/// Parses cgroup.procs / cgroup.threads (one pid per line). Throws ParseError.
std::vector<pid_t> parse_pid_list(std::string_view text, const std::string& file);

}  // namespace harness::kernel
