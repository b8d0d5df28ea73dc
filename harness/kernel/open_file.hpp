#pragma once
// A kernel file kept open for reads repeated every tick (the telemetry's cgroup, /proc and
// zram files): each read is one pread(2) at offset 0, which makes the kernel generate the
// text afresh (seq_file, kernfs, sysfs), into a buffer the caller reuses, so a read in the
// steady state costs one syscall and no allocation (no path join, open, close or string).
// Goes through the Fs root like every other access: the same fixture trees and the same
// fault injection (FsOp::Read) apply.
#include <string>
#include <string_view>

#include "harness/kernel/fs.hpp"

namespace harness::kernel {

class OpenFile {
 public:
  /// Opens `rel` (under the Fs root, as Fs::read) read-only, O_CLOEXEC. A file that cannot be
  /// opened now is opened again at the next read (a file that appears later is then read).
  OpenFile(const Fs& fs, std::string rel);
  ~OpenFile();
  OpenFile(OpenFile&& o) noexcept;
  OpenFile& operator=(OpenFile&&) = delete;
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;

  /// The whole file, read into `buf` and returned as a view into it (valid until the next
  /// read into `buf`). `buf` only grows: its size is capacity, the text is the view. A read
  /// shorter than the buffer is the whole file (what seq_file, kernfs and regular files do);
  /// a read that fills it is made again from offset 0 with twice the buffer, so the text is
  /// always one read's snapshot. Throws IoError(path(), errno, "read") when the file cannot be
  /// opened or read, or a read fault is injected for it (Fs::inject_fault; errno 0 reads as
  /// empty). After a failed read the file is closed and opened again at the next read.
  std::string_view read(std::string& buf);

  /// The full path (Fs root joined), as errors and parsers name the file.
  const std::string& path() const { return path_; }
  /// Whether a descriptor is held now.
  bool is_open() const { return fd_ >= 0; }

 private:
  void close();
  Fs fs_;
  std::string rel_, path_;
  int fd_ = -1;
  int open_err_ = 0;  ///< errno of the last failed open, 0 when open
};

}  // namespace harness::kernel
