// Root-injectable file access (fs.hpp).
#include "harness/kernel/fs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <atomic>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "harness/kernel/errors.hpp"

namespace harness::kernel {

std::string WriteResult::message() const {
  if (err == 0) return "ok";
  return target + ": " + std::strerror(err) + " (" + errno_name(err) + ", errno " + std::to_string(err) + ")";
}

namespace {
struct Fault {
  std::string suffix;  // without leading '/'
  int err;
  FsOp op;
  int times;  // -1 = always
  int hits = 0;
};
std::atomic<bool> g_faults_set{false};
std::mutex g_faults_mu;
std::vector<Fault>& faults() {
  static std::vector<Fault> v;
  return v;
}
std::string_view strip_slash(std::string_view s) {
  while (!s.empty() && s.front() == '/') s.remove_prefix(1);
  return s;
}
bool suffix_match(std::string_view rel, std::string_view suffix) {
  rel = strip_slash(rel);
  suffix = strip_slash(suffix);
  if (suffix.empty() || rel.size() < suffix.size()) return false;
  if (rel.substr(rel.size() - suffix.size()) != suffix) return false;
  return rel.size() == suffix.size() || rel[rel.size() - suffix.size() - 1] == '/';
}
}  // namespace

void Fs::inject_fault(std::string path_suffix, int err, FsOp op, int times) {
  std::lock_guard<std::mutex> lk(g_faults_mu);
  faults().push_back({std::string(strip_slash(path_suffix)), err, op, times});
  g_faults_set.store(true, std::memory_order_relaxed);
}

void Fs::clear_faults() {
  std::lock_guard<std::mutex> lk(g_faults_mu);
  faults().clear();
  g_faults_set.store(false, std::memory_order_relaxed);
}

int Fs::fault_hits(std::string_view path_suffix) {
  std::lock_guard<std::mutex> lk(g_faults_mu);
  int n = 0;
  for (const auto& f : faults())
    if (suffix_match(f.suffix, path_suffix) || suffix_match(path_suffix, f.suffix)) n += f.hits;
  return n;
}

std::optional<int> Fs::injected(FsOp op, std::string_view rel) const {
  if (!g_faults_set.load(std::memory_order_relaxed)) return std::nullopt;
  std::lock_guard<std::mutex> lk(g_faults_mu);
  for (auto& f : faults()) {
    if (f.op != FsOp::Any && f.op != op) continue;
    if (f.times == 0 || !suffix_match(rel, f.suffix)) continue;
    if (f.times > 0) --f.times;
    ++f.hits;
    return f.err;
  }
  return std::nullopt;
}

Fs::Fs(std::filesystem::path root) : root_(std::move(root)) {
  if (root_.empty()) root_ = "/";
}

std::filesystem::path Fs::path(std::string_view rel) const {
  while (!rel.empty() && rel.front() == '/') rel.remove_prefix(1);
  std::filesystem::path r(rel);
  for (const auto& part : r) {
    if (part == "..") throw std::invalid_argument("harness::kernel::Fs: '..' not allowed in path '" + std::string(rel) + "'");
  }
  if (rel.empty()) return root_;
  return root_ / r;
}

bool Fs::exists(std::string_view rel) const {
  struct stat st;
  return ::stat(path(rel).c_str(), &st) == 0;
}

bool Fs::is_dir(std::string_view rel) const {
  struct stat st;
  return ::stat(path(rel).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

ReadResult Fs::try_read(std::string_view rel) const {
  ReadResult r;
  const auto p = path(rel);
  if (auto e = injected(FsOp::Read, rel)) {
    r.err = *e;
    return r;
  }
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    r.err = errno;
    return r;
  }
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      r.err = errno;
      r.text.clear();
      break;
    }
    if (n == 0) break;
    r.text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return r;
}

std::string Fs::read(std::string_view rel) const {
  auto r = try_read(rel);
  if (!r.ok()) throw IoError(path(rel).string(), r.err, "read");
  return std::move(r.text);
}

std::string Fs::read_line(std::string_view rel) const {
  std::string t = read(rel);
  auto nl = t.find('\n');
  if (nl != std::string::npos) t.resize(nl);
  return t;
}

WriteResult Fs::write(std::string_view rel, std::string_view text) const {
  WriteResult r;
  const auto p = path(rel);
  r.target = p.string();
  if (auto e = injected(FsOp::Write, rel)) {
    r.err = *e;
    return r;
  }
  int fd = ::open(p.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    r.err = errno;
    return r;
  }
  // One write, no retry on EINTR: an interrupted memory.reclaim is an outcome.
  const ssize_t n = ::write(fd, text.data(), text.size());
  if (n < 0)
    r.err = errno;
  else if (static_cast<size_t>(n) != text.size())
    r.err = EIO;
  if (::close(fd) != 0 && r.err == 0) r.err = errno;
  return r;
}

WriteResult Fs::mkdir(std::string_view rel) const {
  WriteResult r;
  const auto p = path(rel);
  r.target = p.string();
  if (auto e = injected(FsOp::Mkdir, rel)) {
    r.err = *e;
    return r;
  }
  if (::mkdir(p.c_str(), 0755) != 0) r.err = errno;
  return r;
}

WriteResult Fs::rmdir(std::string_view rel) const {
  WriteResult r;
  const auto p = path(rel);
  r.target = p.string();
  if (auto e = injected(FsOp::Rmdir, rel)) {
    r.err = *e;
    return r;
  }
  if (::rmdir(p.c_str()) != 0) r.err = errno;
  return r;
}

std::vector<std::string> Fs::list(std::string_view rel) const {
  const auto p = path(rel);
  DIR* d = ::opendir(p.c_str());
  if (!d) throw IoError(p.string(), errno, "opendir");
  std::vector<std::string> out;
  while (dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    out.emplace_back(e->d_name);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::int64_t monotonic_ns() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

}  // namespace harness::kernel
