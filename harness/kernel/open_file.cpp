// A kernel file kept open, read with pread at offset 0 (open_file.hpp).
#include "harness/kernel/open_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "harness/kernel/errors.hpp"

namespace harness::kernel {
namespace {
constexpr std::size_t kFirstBuffer = 4096;  ///< bytes: every telemetry file but vmstat fits
int open_ro(const std::string& path, int& err) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  err = fd < 0 ? errno : 0;
  return fd;
}
}  // namespace

OpenFile::OpenFile(const Fs& fs, std::string rel) : fs_(fs), rel_(std::move(rel)), path_(fs.path(rel_).string()) {
  fd_ = open_ro(path_, open_err_);
}

OpenFile::~OpenFile() { close(); }

OpenFile::OpenFile(OpenFile&& o) noexcept
    : fs_(std::move(o.fs_)), rel_(std::move(o.rel_)), path_(std::move(o.path_)), fd_(o.fd_), open_err_(o.open_err_) {
  o.fd_ = -1;
}

void OpenFile::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string_view OpenFile::read(std::string& buf) {
  if (auto e = fs_.injected(FsOp::Read, rel_)) {
    if (*e == 0) return {};
    throw IoError(path_, *e, "read");
  }
  if (fd_ < 0 && (fd_ = open_ro(path_, open_err_)) < 0) throw IoError(path_, open_err_, "read");
  if (buf.size() < kFirstBuffer) buf.resize(kFirstBuffer);
  for (;;) {
    const ssize_t n = ::pread(fd_, buf.data(), buf.size(), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      close();
      throw IoError(path_, err, "read");
    }
    if (static_cast<std::size_t>(n) < buf.size()) return {buf.data(), static_cast<std::size_t>(n)};
    buf.resize(buf.size() * 2);
  }
}

}  // namespace harness::kernel
