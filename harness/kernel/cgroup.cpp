// cgroup v2 directory access (cgroup.hpp).
#include "harness/kernel/cgroup.hpp"

#include <stdexcept>

#include "harness/kernel/errors.hpp"
#include "harness/kernel/keyed.hpp"
#include "harness/kernel/text.hpp"

namespace harness::kernel {

Cgroup::Cgroup(Fs fs, std::string dir) : fs_(std::move(fs)), dir_(std::move(dir)) {
  while (!dir_.empty() && dir_.front() == '/') dir_.erase(0, 1);
  while (!dir_.empty() && dir_.back() == '/') dir_.pop_back();
}

Cgroup Cgroup::root(const Fs& fs, std::string mount) { return Cgroup(fs, std::move(mount)); }

Cgroup Cgroup::child(const std::string& name) const {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos)
    throw std::invalid_argument("harness::kernel::Cgroup::child: invalid cgroup name '" + name + "'");
  return Cgroup(fs_, dir_ + "/" + name);
}

bool Cgroup::exists() const { return fs_.is_dir(dir_); }
WriteResult Cgroup::create() const { return fs_.mkdir(dir_); }
WriteResult Cgroup::remove() const { return fs_.rmdir(dir_); }

std::vector<std::string> parse_word_list(std::string_view text) {
  std::vector<std::string> out;
  for (auto w : split_ws(text)) out.emplace_back(w);
  return out;
}

std::vector<pid_t> parse_pid_list(std::string_view text, const std::string& file) {
  std::vector<pid_t> out;
  int lineno = 0;
  for (auto line : split_lines(text)) {
    ++lineno;
    auto t = trim(line);
    if (t.empty()) continue;
    auto v = parse_u64(t, file, lineno, "pid");
    if (v == 0 || v > 0x7fffffff) throw ParseError(file, lineno, "pid", "pid out of range: " + std::string(t));
    out.push_back(static_cast<pid_t>(v));
  }
  return out;
}

std::vector<std::string> Cgroup::controllers() const { return parse_word_list(fs_.read(file("cgroup.controllers"))); }
std::vector<std::string> Cgroup::subtree_control() const {
  return parse_word_list(fs_.read(file("cgroup.subtree_control")));
}

WriteResult Cgroup::enable_controllers(const std::vector<std::string>& names) const {
  std::string text;
  for (const auto& n : names) {
    if (!text.empty()) text += ' ';
    text += '+' + n;
  }
  return fs_.write(file("cgroup.subtree_control"), text);
}

WriteResult Cgroup::move_pid(pid_t pid) const { return fs_.write(file("cgroup.procs"), std::to_string(pid)); }

std::vector<pid_t> Cgroup::procs() const {
  const auto f = file("cgroup.procs");
  return parse_pid_list(fs_.read(f), fs_.path(f).string());
}

CgroupEvents Cgroup::events() const {
  const auto f = file("cgroup.events");
  return parse_cgroup_events(fs_.read(f), fs_.path(f).string());
}

WriteResult Cgroup::kill() const { return fs_.write(file("cgroup.kill"), "1"); }

WriteResult Cgroup::set_memory_max(const MemoryLimit& l) const { return fs_.write(file("memory.max"), format_limit(l)); }
WriteResult Cgroup::set_memory_high(const MemoryLimit& l) const {
  return fs_.write(file("memory.high"), format_limit(l));
}
WriteResult Cgroup::set_memory_low(std::uint64_t b) const { return fs_.write(file("memory.low"), std::to_string(b)); }
WriteResult Cgroup::set_memory_min(std::uint64_t b) const { return fs_.write(file("memory.min"), std::to_string(b)); }
WriteResult Cgroup::set_memory_swap_max(const MemoryLimit& l) const {
  return fs_.write(file("memory.swap.max"), format_limit(l));
}
WriteResult Cgroup::set_memory_oom_group(bool on) const { return fs_.write(file("memory.oom.group"), on ? "1" : "0"); }

namespace {
MemoryLimit read_limit(const Cgroup& cg, const char* name) {
  const auto f = cg.file(name);
  return parse_limit(cg.fs().read(f), cg.fs().path(f).string(), name);
}
std::uint64_t read_u64(const Cgroup& cg, const char* name) {
  const auto f = cg.file(name);
  return parse_u64(trim(cg.fs().read(f)), cg.fs().path(f).string(), 1, name);
}
Psi read_psi(const Cgroup& cg, const char* name) {
  const auto f = cg.file(name);
  return parse_psi(cg.fs().read(f), cg.fs().path(f).string());
}
}  // namespace

MemoryLimit Cgroup::memory_max() const { return read_limit(*this, "memory.max"); }
MemoryLimit Cgroup::memory_high() const { return read_limit(*this, "memory.high"); }
MemoryLimit Cgroup::memory_swap_max() const { return read_limit(*this, "memory.swap.max"); }
std::uint64_t Cgroup::memory_low_bytes() const { return read_u64(*this, "memory.low"); }
std::uint64_t Cgroup::memory_min_bytes() const { return read_u64(*this, "memory.min"); }
std::uint64_t Cgroup::memory_current_bytes() const { return read_u64(*this, "memory.current"); }
std::uint64_t Cgroup::memory_swap_current_bytes() const { return read_u64(*this, "memory.swap.current"); }

MemoryStat Cgroup::memory_stat() const {
  const auto f = file("memory.stat");
  return parse_memory_stat(fs_.read(f), fs_.path(f).string());
}
MemoryEvents Cgroup::memory_events() const {
  const auto f = file("memory.events");
  return parse_memory_events(fs_.read(f), fs_.path(f).string());
}
Psi Cgroup::memory_pressure() const { return read_psi(*this, "memory.pressure"); }
Psi Cgroup::io_pressure() const { return read_psi(*this, "io.pressure"); }
Psi Cgroup::cpu_pressure() const { return read_psi(*this, "cpu.pressure"); }

ReclaimResult Cgroup::reclaim(std::uint64_t bytes) const {
  ReclaimResult r;
  r.request_bytes = bytes;
  r.written = format_size_suffix(bytes);
  r.start_ns = monotonic_ns();
  r.write = fs_.write(file("memory.reclaim"), r.written);
  r.end_ns = monotonic_ns();
  return r;
}

}  // namespace harness::kernel
