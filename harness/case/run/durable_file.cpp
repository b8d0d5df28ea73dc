// Durable small files (durable_file.hpp).
#include "harness/case/run/durable_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace harness::case_ {
namespace {

[[noreturn]] void fail(const std::string& step, const std::filesystem::path& p, int err) {
  throw std::runtime_error(step + " " + p.string() + ": " + std::strerror(err));
}

}  // namespace

void write_file_durably(const std::filesystem::path& path, const std::string& content) {
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) fail("create", tmp, errno);
  auto abandon = [&](const std::string& step, int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    fail(step, tmp, err);
  };
  std::size_t off = 0;
  while (off < content.size()) {
    const ssize_t n = ::write(fd, content.data() + off, content.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) abandon("write", n < 0 ? errno : EIO);
    off += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) abandon("fsync", errno);
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    fail("close", tmp, e);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error("rename " + tmp.string() + " to " + path.string() + ": " + std::strerror(e));
  }
  const auto dir = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) fail("open directory", dir, errno);
  const int rc = ::fsync(dfd);
  const int e = errno;
  ::close(dfd);
  if (rc != 0) fail("fsync directory", dir, e);
}

std::optional<std::string> read_small_file(const std::filesystem::path& path, std::size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO (or a device) put where a state file belongs must not wait
  // for a writer; whatever it is, it is refused below unless it is a regular file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    fail("open", path, errno);
  }
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw std::runtime_error(path.string() + ": not a regular file");
  }
  std::string out;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      fail("read", path, e);
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > max_bytes) {
      ::close(fd);
      throw std::runtime_error(path.string() + ": larger than " + std::to_string(max_bytes) + " bytes");
    }
  }
  ::close(fd);
  return out;
}

}  // namespace harness::case_
