// ext4 data disk via mkfs.ext4 -d and debugfs (see data_disk.hpp).
#include "harness/vm/data_disk.hpp"

#include "harness/vm/subprocess.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>

namespace fs = std::filesystem;

namespace harness::vm {
namespace {
// debugfs reads paths space-separated; refuse anything it could misparse.
void check_guest_path(const std::string& p) {
  if (p.empty() || p[0] != '/' || p.find_first_of(" \t\n\"'\\") != std::string::npos)
    throw std::runtime_error("data disk: unsupported path '" + p + "' (absolute, no spaces/quotes)");
}

std::string debugfs(const std::string& image, const std::string& cmd, bool writable) {
  std::vector<std::string> argv = {"debugfs"};
  if (writable) argv.push_back("-w");
  argv.insert(argv.end(), {"-R", cmd, image});
  RunResult r = run(argv);
  if (r.exit_code != 0)
    throw std::runtime_error("debugfs '" + cmd + "' on " + image + " failed: " + r.err);
  return r.out + "\n" + r.err;  // debugfs reports most errors on stderr with exit 0
}
}  // namespace

void make_ext4(const std::string& image, int size_mib, const std::string& staging_dir) {
  if (size_mib < 16) throw std::runtime_error("data disk: size must be >= 16 MiB");
  fs::remove(image);
  int fd = open(image.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("data disk: cannot create " + image);
  int rc = ftruncate(fd, static_cast<off_t>(size_mib) * 1024 * 1024);
  close(fd);
  if (rc != 0) throw std::runtime_error("data disk: cannot size " + image);
  std::vector<std::string> argv = {"mkfs.ext4", "-q", "-F", "-L", "harness-data",
                                   "-E", "root_owner=0:0"};
  if (!staging_dir.empty()) argv.insert(argv.end(), {"-d", staging_dir});
  argv.push_back(image);
  run_checked(argv);
}

void copy_disk(const std::string& from, const std::string& to) {
  run_checked({"cp", "--sparse=always", "-f", from, to});
}

void disk_write(const std::string& image, const std::string& host_file,
                const std::string& guest_path, unsigned mode) {
  check_guest_path(guest_path);
  if (host_file.find_first_of(" \t\n\"'\\") != std::string::npos)
    throw std::runtime_error("data disk: unsupported host path '" + host_file + "'");
  fs::path gp(guest_path);
  // create parents one by one (mkdir of an existing dir just prints an error)
  fs::path acc = "/";
  for (const auto& part : gp.parent_path().relative_path()) {
    acc /= part;
    debugfs(image, "mkdir " + acc.string(), true);
  }
  debugfs(image, "rm " + guest_path, true);
  std::string out = debugfs(image, "write " + host_file + " " + guest_path, true);
  if (!disk_exists(image, guest_path))
    throw std::runtime_error("data disk: writing " + guest_path + " into " + image + " failed: " + out);
  char m[32];
  std::snprintf(m, sizeof m, "0%o", 0100000 | (mode & 07777));
  debugfs(image, "sif " + guest_path + " mode " + m, true);
  debugfs(image, "sif " + guest_path + " uid 0", true);
  debugfs(image, "sif " + guest_path + " gid 0", true);
}

void disk_rdump(const std::string& image, const std::string& guest_dir, const std::string& host_dir) {
  check_guest_path(guest_dir);
  fs::create_directories(host_dir);
  if (host_dir.find_first_of(" \t\n\"'\\") != std::string::npos)
    throw std::runtime_error("data disk: unsupported host path '" + host_dir + "'");
  std::string out = debugfs(image, "rdump " + guest_dir + " " + host_dir, false);
  if (!fs::exists(fs::path(host_dir) / fs::path(guest_dir).filename()))
    throw std::runtime_error("data disk: rdump " + guest_dir + " from " + image + " failed: " + out);
}

std::uint64_t disk_file_offset(const std::string& image, const std::string& guest_path) {
  if (!disk_exists(image, guest_path))
    throw std::runtime_error("data disk: " + guest_path + " not found in " + image);
  const std::string bmap = debugfs(image, "bmap " + guest_path + " 0", false);
  const std::string stats = debugfs(image, "stats", false);
  const auto bs = stats.find("Block size:");
  unsigned long long block = 0, block_size = 0;
  if (bs == std::string::npos || std::sscanf(stats.c_str() + bs, "Block size: %llu", &block_size) != 1 || block_size == 0)
    throw std::runtime_error("data disk: no block size in debugfs stats of " + image);
  if (std::sscanf(bmap.c_str(), "%llu", &block) != 1 || block == 0)
    throw std::runtime_error("data disk: " + guest_path + " in " + image + " has no data block: " + bmap);
  return static_cast<std::uint64_t>(block) * block_size;
}

bool disk_exists(const std::string& image, const std::string& guest_path) {
  check_guest_path(guest_path);
  RunResult r = run({"debugfs", "-R", "stat " + guest_path, image});
  return r.exit_code == 0 && r.out.find("Inode:") != std::string::npos;
}

std::string disk_cat(const std::string& image, const std::string& guest_path) {
  if (!disk_exists(image, guest_path))
    throw std::runtime_error("data disk: " + guest_path + " not found in " + image);
  RunResult r = run({"debugfs", "-R", "cat " + guest_path, image});
  return r.out;
}

}  // namespace harness::vm
