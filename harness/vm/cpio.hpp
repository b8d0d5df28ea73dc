#pragma once
// Writer of a gzip-compressed cpio "newc" archive: the initramfs format the Linux kernel
// unpacks into its rootfs (Documentation/driver-api/early-userspace/buffer-format.rst).
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

namespace harness::vm {

/// Streams entries into `path` (gzip level 6 via zlib). Parent directories of every entry
/// are added automatically (mode 0755) the first time they are needed. Paths are relative
/// to the archive root, without a leading '/'. mtime is fixed at 0 so identical inputs give
/// identical bytes (stable content hash). Errors throw std::runtime_error naming the archive.
class CpioWriter {
 public:
  explicit CpioWriter(const std::string& path);
  ~CpioWriter();
  CpioWriter(const CpioWriter&) = delete;
  CpioWriter& operator=(const CpioWriter&) = delete;

  /// Directory entry (mode: permission bits, e.g. 0755).
  void add_dir(const std::string& path, std::uint32_t mode = 0755);
  /// Regular file with the given bytes.
  void add_file(const std::string& path, std::string_view data, std::uint32_t mode);
  /// Regular file copied from the host file `src` (contents, mode bits preserved unless given).
  void add_host_file(const std::string& path, const std::string& src, std::uint32_t mode = 0);
  /// Symbolic link `path` -> `target`.
  void add_symlink(const std::string& path, const std::string& target);
  /// Writes the TRAILER!!! entry and closes the file. Called by the destructor if needed.
  void finish();
  /// True when an entry with this path was already added.
  bool has(const std::string& path) const { return paths_.count(path) != 0; }

 private:
  void ensure_parents(const std::string& path);
  void header(const std::string& path, std::uint32_t mode, std::uint64_t size);
  void write(std::string_view bytes);
  void pad4();
  std::string path_;
  void* gz_ = nullptr;
  std::uint64_t offset_ = 0;
  std::uint32_t ino_ = 1;
  std::set<std::string> paths_;
};

}  // namespace harness::vm
