// Cache locations and small file helpers (see paths.hpp).
#include "harness/vm/paths.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace fs = std::filesystem;

namespace harness::vm {

std::string cache_root(const std::string& override_dir) {
  std::string root;
  if (!override_dir.empty()) {
    root = override_dir;
  } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    root = std::string(x) + "/reclaim-harness";
  } else if (const char* h = std::getenv("HOME"); h && *h) {
    root = std::string(h) + "/.cache/reclaim-harness";
  } else {
    throw std::runtime_error("cache: neither --cache, XDG_CACHE_HOME nor HOME is set");
  }
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec || !fs::is_directory(root))
    throw std::runtime_error("cache: cannot create " + root + ": " + ec.message());
  chmod(root.c_str(), 0700);
  return fs::absolute(root).string();
}

std::string self_exe() { return fs::read_symlink("/proc/self/exe").string(); }

std::string self_exe_dir() { return fs::path(self_exe()).parent_path().string(); }

void write_file(const std::string& path, const std::string& data, unsigned mode) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
  fchmod(fd, mode);
  std::size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      close(fd);
      unlink(tmp.c_str());
      throw std::runtime_error("cannot write " + path + ": " + std::strerror(e));
    }
    off += static_cast<std::size_t>(n);
  }
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    unlink(tmp.c_str());
    throw std::runtime_error("cannot rename into " + path + ": " + std::strerror(e));
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

CacheLock::CacheLock(const std::string& lock_path, const std::string& what) {
  std::error_code ec;
  fs::create_directories(fs::path(lock_path).parent_path(), ec);
  fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw std::runtime_error("cannot open the lock " + lock_path + ": " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
  std::fprintf(stderr, "vm image: another process is building %s; waiting for it (lock %s)\n", what.c_str(),
               lock_path.c_str());
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    const int e = errno;
    ::close(fd_);
    throw std::runtime_error("cannot lock " + lock_path + ": " + std::strerror(e));
  }
}

CacheLock::~CacheLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace harness::vm
