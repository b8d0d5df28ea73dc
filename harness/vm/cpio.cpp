// newc cpio + gzip writer (see cpio.hpp).
#include "harness/vm/cpio.hpp"

#include <sys/stat.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace harness::vm {

CpioWriter::CpioWriter(const std::string& path) : path_(path) {
  gz_ = gzopen(path.c_str(), "wb6");
  if (!gz_) throw std::runtime_error("cpio: cannot create " + path);
}

CpioWriter::~CpioWriter() {
  try {
    finish();
  } catch (...) {
    // a destructor must not throw; callers that need the archive call finish() themselves and see its error
  }
}

void CpioWriter::write(std::string_view bytes) {
  if (bytes.empty()) return;
  if (gzwrite(static_cast<gzFile>(gz_), bytes.data(), static_cast<unsigned>(bytes.size())) !=
      static_cast<int>(bytes.size()))
    throw std::runtime_error("cpio: write failed on " + path_);
  offset_ += bytes.size();
}

void CpioWriter::pad4() {
  static const char zeros[4] = {0, 0, 0, 0};
  if (offset_ % 4) write(std::string_view(zeros, 4 - offset_ % 4));
}

void CpioWriter::header(const std::string& path, std::uint32_t mode, std::uint64_t size) {
  if (size > 0xffffffffULL) throw std::runtime_error("cpio: entry too large: " + path);
  char h[111];
  std::snprintf(h, sizeof h, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
                ino_++, mode, 0u, 0u, 1u, 0u, static_cast<unsigned>(size), 0u, 0u, 0u, 0u,
                static_cast<unsigned>(path.size() + 1), 0u);
  write(std::string_view(h, 110));
  write(std::string_view(path.c_str(), path.size() + 1));
  pad4();
}

void CpioWriter::ensure_parents(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return;
  std::string parent = path.substr(0, slash);
  if (parent.empty() || paths_.count(parent)) return;
  add_dir(parent, 0755);
}

void CpioWriter::add_dir(const std::string& path, std::uint32_t mode) {
  if (paths_.count(path)) return;
  ensure_parents(path);
  paths_.insert(path);
  header(path, S_IFDIR | (mode & 07777), 0);
}

void CpioWriter::add_file(const std::string& path, std::string_view data, std::uint32_t mode) {
  if (paths_.count(path)) throw std::runtime_error("cpio: duplicate entry " + path);
  ensure_parents(path);
  paths_.insert(path);
  header(path, S_IFREG | (mode & 07777), data.size());
  write(data);
  pad4();
}

void CpioWriter::add_host_file(const std::string& path, const std::string& src,
                               std::uint32_t mode) {
  std::ifstream in(src, std::ios::binary);
  if (!in) throw std::runtime_error("cpio: cannot read " + src);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (mode == 0) {
    struct stat st{};
    if (stat(src.c_str(), &st) != 0) throw std::runtime_error("cpio: cannot stat " + src);
    mode = st.st_mode & 07777;
  }
  add_file(path, data, mode);
}

void CpioWriter::add_symlink(const std::string& path, const std::string& target) {
  if (paths_.count(path)) return;
  ensure_parents(path);
  paths_.insert(path);
  header(path, S_IFLNK | 0777, target.size());
  write(target);
  pad4();
}

void CpioWriter::finish() {
  if (!gz_) return;
  header("TRAILER!!!", 0, 0);
  int rc = gzclose(static_cast<gzFile>(gz_));
  gz_ = nullptr;
  if (rc != Z_OK) throw std::runtime_error("cpio: closing " + path_ + " failed");
}

}  // namespace harness::vm
