#pragma once
// Root-injectable file access: every read and write of /sys and /proc by the harness
// goes through a harness::kernel::Fs. Fs{"/"} is the live system; Fs{"tests/fixtures/<kernel>/root"}
// is a captured tree (docs/DESIGN.md "The kernel-interface layer": the root is injectable).
//
// Paths given to Fs are relative to the root ("sys/fs/cgroup/bg/memory.current"); a
// leading '/' is ignored, so "/proc/vmstat" also works. ".." components are rejected
// (std::invalid_argument) so a path can never escape the root.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harness::kernel {

/// Outcome of one write-like operation: errno as data (0 = success).
/// EAGAIN from memory.reclaim, EBUSY from subtree_control or zram disksize, ENOENT for a
/// controller bound to cgroup v1: all are outcomes the caller records, not crashes.
struct WriteResult {
  int err = 0;  ///< errno of the failing syscall; 0 on success
  /// The path (under root) or device the operation addressed, for messages.
  std::string target;
  bool ok() const { return err == 0; }
  /// "ok" or "<target>: <strerror(err)> (<ENAME>, errno <n>)", e.g. "... (ENOMEM, errno 12)".
  std::string message() const;
};

/// Outcome of a read that reports errno as data instead of throwing.
struct ReadResult {
  int err = 0;       ///< 0 on success, else errno of open/read
  std::string text;  ///< file contents (empty when err != 0)
  bool ok() const { return err == 0; }
};

/// Kernel-interface operations a test can make fail (Fs::inject_fault).
enum class FsOp { Any, Read, Write, Mkdir, Rmdir, Swapon, Swapoff, Mkswap };

/// Root-injectable accessor. Cheap to copy. Thread-safe (no mutable state; the
/// process-wide fault table below has its own lock).
class Fs {
 public:
  /// `root` defaults to the live system "/".
  explicit Fs(std::filesystem::path root = "/");

  const std::filesystem::path& root() const { return root_; }
  /// Joins `rel` under the root. Throws std::invalid_argument on a ".." component.
  std::filesystem::path path(std::string_view rel) const;

  bool exists(std::string_view rel) const;
  bool is_dir(std::string_view rel) const;
  /// Whole file as text. Throws harness::kernel::IoError (with errno) when it cannot be read.
  std::string read(std::string_view rel) const;
  /// Whole file as text, errno as data.
  ReadResult try_read(std::string_view rel) const;
  /// First line without the trailing newline. Throws IoError.
  std::string read_line(std::string_view rel) const;

  /// One write(2) of `text` to an existing file (O_WRONLY, no O_CREAT, no O_TRUNC:
  /// kernel files take one value per write). A short write is reported as EIO.
  WriteResult write(std::string_view rel, std::string_view text) const;
  /// mkdir(2) with mode 0755; EEXIST is reported, not hidden.
  WriteResult mkdir(std::string_view rel) const;
  /// rmdir(2) (cgroups are removed with rmdir; EBUSY when populated).
  WriteResult rmdir(std::string_view rel) const;
  /// Names of the entries of a directory, sorted, without "." and "..". Throws IoError.
  std::vector<std::string> list(std::string_view rel) const;

  // --- fault injection (tests only) ------------------------------------------------
  // A process-wide table of faults: an operation `op` (or any, FsOp::Any) on a path whose
  // root-relative form equals `path_suffix` or ends with "/" + path_suffix (leading '/'
  // ignored on both; "memory.reclaim", "harness/bg/memory.reclaim" and "/dev/zram0" all
  // work) fails with `err` without touching the file or calling the syscall. `times` > 0
  // fails only the next `times` matching calls (then the call goes through); -1 = always.
  // Covers read/try_read, write, mkdir, rmdir and swapon/swapoff/mkswap (swap.hpp).
  // err 0 = pretend success without making the call (a fixture tree run as root must
  // never reach the real swapon(2)/swapoff(2)).
  // Zero cost when no fault was ever set: one relaxed atomic load per call.
  static void inject_fault(std::string path_suffix, int err, FsOp op = FsOp::Any, int times = -1);
  /// Removes every fault and resets the hit counters.
  static void clear_faults();
  /// How many calls matching `path_suffix` (same rule; any op) were failed by injection.
  static int fault_hits(std::string_view path_suffix);
  /// The result injected for `op` on `rel` (counting the hit), or nullopt (the normal
  /// case: make the call). Used by every syscall wrapper of the kernel layer.
  std::optional<int> injected(FsOp op, std::string_view rel) const;

 private:
  std::filesystem::path root_;
};

/// CLOCK_MONOTONIC now, in ns (the clock of every timed write: docs/DESIGN.md "Controller").
std::int64_t monotonic_ns();

/// Test helper: faults set through it are cleared when it goes out of scope.
class FaultScope {
 public:
  FaultScope() { Fs::clear_faults(); }
  ~FaultScope() { Fs::clear_faults(); }
  FaultScope(const FaultScope&) = delete;
  FaultScope& operator=(const FaultScope&) = delete;
  FaultScope& fail(std::string path_suffix, int err, FsOp op = FsOp::Any, int times = -1) {
    Fs::inject_fault(std::move(path_suffix), err, op, times);
    return *this;
  }
};

}  // namespace harness::kernel
