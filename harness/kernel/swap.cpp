// Swap devices: /proc/swaps, swapon(2)/swapoff(2), swap header, swapfile validation (swap.hpp).
#include "harness/kernel/swap.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <vector>

#include "harness/kernel/errors.hpp"
#include "harness/kernel/keyed.hpp"
#include "harness/kernel/text.hpp"
#include "harness/text/shell_quote.hpp"

namespace harness::kernel {

std::vector<SwapDevice> parse_swaps(std::string_view text, const std::string& file) {
  std::vector<SwapDevice> out;
  auto lines = split_lines(text);
  if (lines.empty() || split_ws(lines[0]).empty() || split_ws(lines[0])[0] != "Filename")
    throw ParseError(file, 1, "header", "expected the header 'Filename Type Size Used Priority'");
  for (size_t i = 1; i < lines.size(); ++i) {
    const int lineno = static_cast<int>(i + 1);
    auto w = split_ws(lines[i]);
    if (w.empty()) continue;
    if (w.size() != 5)
      throw ParseError(file, lineno, "device", "expected 5 fields (Filename Type Size Used Priority), got " +
                                                   std::to_string(w.size()));
    SwapDevice d;
    d.path = unescape_octal(w[0]);
    d.type = std::string(w[1]);
    d.size_kib = parse_u64(w[2], file, lineno, "Size");
    d.used_kib = parse_u64(w[3], file, lineno, "Used");
    auto [p, ec] = std::from_chars(w[4].data(), w[4].data() + w[4].size(), d.priority);
    if (ec != std::errc() || p != w[4].data() + w[4].size())
      throw ParseError(file, lineno, "Priority", "expected an integer, got '" + std::string(w[4]) + "'");
    out.push_back(std::move(d));
  }
  return out;
}

std::optional<std::uint64_t> swap_used_kib(std::string_view text, const std::string& file, std::string_view path) {
  std::string_view line, w[5], more;
  if (!next_line(text, line) || !next_word(line, w[0]) || w[0] != "Filename")
    throw ParseError(file, 1, "header", "expected the header 'Filename Type Size Used Priority'");
  std::optional<std::uint64_t> used;
  int lineno = 1;
  while (next_line(text, line)) {
    ++lineno;
    int n = 0;
    while (n < 5 && next_word(line, w[n])) ++n;
    while (next_word(line, more)) ++n;
    if (n == 0) continue;
    if (n != 5)
      throw ParseError(file, lineno, "device", "expected 5 fields (Filename Type Size Used Priority), got " +
                                                   std::to_string(n));
    if (!used && unescaped_equals(w[0], path)) used = parse_u64(w[3], file, lineno, "Used");
  }
  return used;
}

std::vector<SwapDevice> read_swaps(const Fs& fs) { return parse_swaps(fs.read("proc/swaps"), fs.path("proc/swaps").string()); }

WriteResult swapon(const Fs& fs, const std::string& path, int priority) {
  WriteResult r;
  const auto p = fs.path(path);
  r.target = p.string();
  if (priority < 0 || priority > SWAP_FLAG_PRIO_MASK) {
    r.err = EINVAL;
    return r;
  }
  if (auto e = fs.injected(FsOp::Swapon, path)) {
    r.err = *e;
    return r;
  }
  const int flags = SWAP_FLAG_PREFER | ((priority << SWAP_FLAG_PRIO_SHIFT) & SWAP_FLAG_PRIO_MASK);
  if (::swapon(p.c_str(), flags) != 0) r.err = errno;
  return r;
}

WriteResult swapoff(const Fs& fs, const std::string& path) {
  WriteResult r;
  const auto p = fs.path(path);
  r.target = p.string();
  if (auto e = fs.injected(FsOp::Swapoff, path)) {
    r.err = *e;
    return r;
  }
  if (::swapoff(p.c_str()) != 0) r.err = errno;
  return r;
}

std::vector<SwapHolder> swap_holders(const Fs& fs) {
  std::vector<SwapHolder> out;
  for (const auto& name : fs.list("proc")) {
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    auto st = fs.try_read("proc/" + name + "/status");
    if (!st.ok()) continue;
    SwapHolder h;
    h.pid = static_cast<pid_t>(std::stol(name));
    for (auto line : split_lines(st.text)) {
      auto colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      const auto key = line.substr(0, colon);
      const auto val = trim(line.substr(colon + 1));
      if (key == "Name")
        h.name = std::string(val);
      else if (key == "State")
        h.state = std::string(val);
      else if (key == "VmSwap") {
        auto w = split_ws(val);
        if (!w.empty()) std::from_chars(w[0].data(), w[0].data() + w[0].size(), h.vm_swap_kib);
      }
    }
    if (h.vm_swap_kib == 0) continue;
    if (auto cg = fs.try_read("proc/" + name + "/cgroup"); cg.ok())
      for (auto line : split_lines(cg.text))
        if (line.rfind("0::", 0) == 0) h.cgroup = std::string(trim(line.substr(3)));
    out.push_back(std::move(h));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const SwapHolder& a, const SwapHolder& b) { return a.vm_swap_kib > b.vm_swap_kib; });
  return out;
}

std::string describe_swap_holders(const std::vector<SwapHolder>& holders, std::size_t max) {
  if (holders.empty()) return "no process has VmSwap > 0 (shmem/tmpfs pages or a kernel user)";
  std::string s;
  for (std::size_t i = 0; i < holders.size() && i < max; ++i) {
    const auto& h = holders[i];
    s += (i ? "; " : "") + std::string("pid ") + std::to_string(h.pid) + " " + h.name + " (" +
         (h.state.empty() ? "state ?" : h.state) + ", cgroup " + (h.cgroup.empty() ? "?" : h.cgroup) + ") " +
         std::to_string(h.vm_swap_kib) + " KiB";
  }
  if (holders.size() > max) s += "; + " + std::to_string(holders.size() - max) + " more";
  return s;
}

namespace {
constexpr const char kSignature[] = "SWAPSPACE2";  // 10 bytes, mkswap(8) / mm/swapfile.c
constexpr size_t kSigLen = 10;
}  // namespace

WriteResult mkswap(const Fs& fs, const std::string& path) {
  WriteResult r;
  const auto p = fs.path(path);
  r.target = p.string();
  if (auto e = fs.injected(FsOp::Mkswap, path)) {
    r.err = *e;
    return r;
  }
  const long page = ::sysconf(_SC_PAGESIZE);
  int fd = ::open(p.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    r.err = errno;
    return r;
  }
  const off_t size = ::lseek(fd, 0, SEEK_END);
  if (size < 0) {
    r.err = errno;
    ::close(fd);
    return r;
  }
  const std::uint64_t pages = static_cast<std::uint64_t>(size) / static_cast<std::uint64_t>(page);
  if (pages < 10 || pages - 1 > UINT32_MAX) {
    r.err = EINVAL;
    ::close(fd);
    return r;
  }
  std::vector<unsigned char> hdr(static_cast<size_t>(page), 0);
  // union swap_header.info at offset 1024: version, last_page, nr_badpages (u32, native endian).
  const std::uint32_t version = 1, last_page = static_cast<std::uint32_t>(pages - 1), bad = 0;
  std::memcpy(&hdr[1024], &version, 4);
  std::memcpy(&hdr[1028], &last_page, 4);
  std::memcpy(&hdr[1032], &bad, 4);
  std::memcpy(&hdr[static_cast<size_t>(page) - kSigLen], kSignature, kSigLen);
  const ssize_t n = ::pwrite(fd, hdr.data(), hdr.size(), 0);
  if (n < 0)
    r.err = errno;
  else if (static_cast<size_t>(n) != hdr.size())
    r.err = EIO;
  if (r.err == 0 && ::fsync(fd) != 0) r.err = errno;
  ::close(fd);
  return r;
}

SwapfileCheck validate_swapfile(const Fs& fs, const std::string& path) {
  SwapfileCheck c;
  const auto p = fs.path(path);
  struct stat st;
  if (::stat(p.c_str(), &st) != 0) {
    const std::string q = harness::text::shell_quote(path);
    const std::string dir = std::filesystem::path(path).parent_path().empty()
                                ? std::string(".")
                                : std::filesystem::path(path).parent_path().string();
    c.problems.push_back(p.string() + ": " + std::strerror(errno) + "; create it with zeros: mkdir -p " +
                         harness::text::shell_quote(dir) + " && dd if=/dev/zero of=" + q + " bs=1M count=<MiB> && chmod 600 " +
                         q + " && mkswap " + q);
    return c;
  }
  c.exists = true;
  c.size_bytes = static_cast<std::uint64_t>(st.st_size);
  c.allocated_bytes = static_cast<std::uint64_t>(st.st_blocks) * 512;
  if (!S_ISREG(st.st_mode)) {
    c.problems.push_back(p.string() + " is not a regular file");
    return c;
  }
  const long page = ::sysconf(_SC_PAGESIZE);
  if (c.size_bytes < 10 * static_cast<std::uint64_t>(page))
    c.problems.push_back(p.string() + " is " + std::to_string(c.size_bytes) +
                         " bytes, smaller than 10 pages; recreate it larger");
  if (c.allocated_bytes < c.size_bytes)
    c.problems.push_back(p.string() + " has holes (" + std::to_string(c.allocated_bytes) + " of " +
                         std::to_string(c.size_bytes) +
                         " bytes allocated); swapon rejects sparse files: rewrite it with dd if=/dev/zero "
                         "(not fallocate/truncate), then mkswap");
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    c.problems.push_back(p.string() + ": cannot open for reading: " + std::strerror(errno));
    return c;
  }
  char sig[kSigLen] = {};
  const ssize_t n = ::pread(fd, sig, kSigLen, page - static_cast<long>(kSigLen));
  ::close(fd);
  c.has_signature = n == static_cast<ssize_t>(kSigLen) && std::memcmp(sig, kSignature, kSigLen) == 0;
  if (!c.has_signature)
    c.problems.push_back(p.string() + " has no swap signature (SWAPSPACE2 at offset " +
                         std::to_string(page - static_cast<long>(kSigLen)) + "); run mkswap " +
                         harness::text::shell_quote(path));
  return c;
}

}  // namespace harness::kernel
