// 1 Hz telemetry sampler (docs/DESIGN.md "Telemetry at 1 Hz").
#include "harness/case/run/telemetry.hpp"

#include <charconv>
#include <exception>
#include <iterator>

#include "harness/case/host/confounds.hpp"
#include "harness/case/run/telemetry_cpu.hpp"
#include "harness/kernel/errors.hpp"
#include "harness/kernel/keyed.hpp"
#include "harness/kernel/swap.hpp"
#include "harness/kernel/text.hpp"

namespace harness::case_ {

namespace hk = harness::kernel;

TelemetrySampler::CgroupFiles::CgroupFiles(const hk::Cgroup& cg)
    : memory_pressure(cg.fs(), cg.file("memory.pressure")),
      cpu_pressure(cg.fs(), cg.file("cpu.pressure")),
      io_pressure(cg.fs(), cg.file("io.pressure")),
      memory_current(cg.fs(), cg.file("memory.current")),
      memory_swap_current(cg.fs(), cg.file("memory.swap.current")),
      memory_stat(cg.fs(), cg.file("memory.stat")),
      memory_events(cg.fs(), cg.file("memory.events")),
      cpu_stat(cg.fs(), cg.file("cpu.stat")) {}

TelemetrySampler::ZramFiles::ZramFiles(const hk::Fs& fs, const hk::Zram& z)
    : initstate(fs, z.sysfs_dir() + "/initstate"), mm_stat(fs, z.sysfs_dir() + "/mm_stat") {}

TelemetrySampler::TelemetrySampler(hk::Fs fs, hk::Cgroup bg, hk::Cgroup fg, const hk::Zram* zram,
                                   std::string zram_path, std::string swapfile_path)
    : fs_(std::move(fs)),
      zram_path_(std::move(zram_path)),
      swapfile_path_(std::move(swapfile_path)),
      bg_(bg),
      fg_(fg),
      sys_memory_(fs_, "proc/pressure/memory"),
      sys_cpu_(fs_, "proc/pressure/cpu"),
      sys_io_(fs_, "proc/pressure/io"),
      vmstat_(fs_, "proc/vmstat"),
      swaps_(fs_, "proc/swaps"),
      stat_(fs_, "proc/stat") {
  if (zram) zram_.emplace(fs_, *zram);
  // kswapd's pids, once: kernel threads, they live as long as the kernel. A /proc that cannot be
  // listed leaves none (kswapd_cpu_us NULL and "proc.kswapd" named in every sample's errors).
  try {
    for (int pid : kswapd_pids(fs_)) kswapd_.emplace_back(fs_, "proc/" + std::to_string(pid) + "/stat");
  } catch (const hk::IoError&) {  // named per sample by read_cpu
  }
  user_hz_ = user_hz();
}

namespace {
using Opt = std::optional<std::int64_t>;
Opt opt(std::optional<std::uint64_t> v) { return v ? Opt(static_cast<std::int64_t>(*v)) : std::nullopt; }
Opt opt(std::uint64_t v) { return static_cast<std::int64_t>(v); }

// The keys recorded of each keyed file, in the order of the fields they fill.
constexpr std::string_view kStatKeys[] = {"pgsteal", "pgscan", "workingset_refault_anon", "workingset_refault_file",
                                          "pgmajfault"};
constexpr std::string_view kEventKeys[] = {"oom", "oom_kill"};
constexpr std::string_view kVmstatKeys[] = {"pswpin", "pswpout"};

// A file holding one unsigned number (memory.current, initstate); `field` is named in the
// ParseError (built only then: a long name would be a heap string per read).
std::uint64_t whole_u64(std::string_view text, const std::string& file, const char* field) {
  text = hk::trim(text);
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return hk::parse_u64(text, file, 1, field);
  return v;
}
}  // namespace

namespace {
/// Runs `fn`, one read; a failure is recorded under `what` in `errors` (null, nothing
/// allocated, until a read fails) and leaves the fields `fn` fills empty.
template <class Fn>
void guarded(nlohmann::json& errors, const char* what, Fn&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    errors[what] = e.what();
  }
}
}  // namespace

void TelemetrySampler::read_psi(const char* what, hk::OpenFile& f, Opt& some, Opt& full, nlohmann::json& errors) {
  guarded(errors, what, [&] {
    const hk::Psi p = hk::parse_psi(f.read(buf_), f.path());
    some = opt(p.some_total_us());
    full = opt(p.full_total_us());
  });
}

void TelemetrySampler::read_u64(const char* what, hk::OpenFile& f, Opt& out, nlohmann::json& errors) {
  guarded(errors, what, [&] { out = opt(whole_u64(f.read(buf_), f.path(), what + 3)); });  // "bg." off: the file's name
}

void TelemetrySampler::read_pressure(TelemetrySample& s, nlohmann::json& errors) {
  // bg PSI first: it is what the controller reads, closest to the tick.
  read_psi("bg.memory.pressure", bg_.memory_pressure, s.bg_some_us, s.bg_full_us, errors);
  if (s.bg_some_us) s.read_ns = hk::monotonic_ns();  // the controller's window length (SPEC.md v2)
  read_psi("fg.memory.pressure", fg_.memory_pressure, s.fg_some_us, s.fg_full_us, errors);
  read_psi("proc.pressure.memory", sys_memory_, s.sys_some_us, s.sys_full_us, errors);
  // cpu and io PSI beside memory: a latency difference is then told apart as a memory
  // stall, CPU contention (zram compression and reclaim share the vCPU) or I/O wait.
  read_psi("bg.cpu.pressure", bg_.cpu_pressure, s.bg_cpu_some_us, s.bg_cpu_full_us, errors);
  read_psi("bg.io.pressure", bg_.io_pressure, s.bg_io_some_us, s.bg_io_full_us, errors);
  read_psi("fg.cpu.pressure", fg_.cpu_pressure, s.fg_cpu_some_us, s.fg_cpu_full_us, errors);
  read_psi("fg.io.pressure", fg_.io_pressure, s.fg_io_some_us, s.fg_io_full_us, errors);
  read_psi("proc.pressure.cpu", sys_cpu_, s.sys_cpu_some_us, s.sys_cpu_full_us, errors);
  read_psi("proc.pressure.io", sys_io_, s.sys_io_some_us, s.sys_io_full_us, errors);
}

void TelemetrySampler::read_memory(TelemetrySample& s, nlohmann::json& errors) {
  read_u64("bg.memory.current", bg_.memory_current, s.bg_current_bytes, errors);
  read_u64("fg.memory.current", fg_.memory_current, s.fg_current_bytes, errors);
  read_u64("bg.memory.swap.current", bg_.memory_swap_current, s.bg_swap_current_bytes, errors);
  read_u64("fg.memory.swap.current", fg_.memory_swap_current, s.fg_swap_current_bytes, errors);
  auto stat = [&](const char* what, CgroupFiles& c, Opt& pgsteal, Opt& pgscan, Opt& anon, Opt& file, Opt& majfault) {
    guarded(errors, what, [&] {
      std::optional<std::uint64_t> v[std::size(kStatKeys)];
      hk::pick_keyed(c.memory_stat.read(buf_), c.memory_stat.path(), kStatKeys, v, std::size(kStatKeys));
      pgsteal = opt(v[0]), pgscan = opt(v[1]), anon = opt(v[2]), file = opt(v[3]), majfault = opt(v[4]);
    });
  };
  stat("bg.memory.stat", bg_, s.bg_pgsteal, s.bg_pgscan, s.bg_workingset_refault_anon, s.bg_workingset_refault_file,
       s.bg_pgmajfault);
  stat("fg.memory.stat", fg_, s.fg_pgsteal, s.fg_pgscan, s.fg_workingset_refault_anon, s.fg_workingset_refault_file,
       s.fg_pgmajfault);
  auto events = [&](const char* what, CgroupFiles& c, Opt& oom, Opt& oom_kill) {
    guarded(errors, what, [&] {
      std::optional<std::uint64_t> v[std::size(kEventKeys)];
      hk::pick_keyed(c.memory_events.read(buf_), c.memory_events.path(), kEventKeys, v, std::size(kEventKeys));
      oom = opt(v[0]), oom_kill = opt(v[1]);
    });
  };
  events("bg.memory.events", bg_, s.bg_oom, s.bg_oom_kill);
  events("fg.memory.events", fg_, s.fg_oom, s.fg_oom_kill);
}

void TelemetrySampler::read_swap(TelemetrySample& s, nlohmann::json& errors) {
  guarded(errors, "proc.vmstat", [&] {
    std::optional<std::uint64_t> v[std::size(kVmstatKeys)];
    hk::pick_keyed(vmstat_.read(buf_), vmstat_.path(), kVmstatKeys, v, std::size(kVmstatKeys));
    s.pswpin = opt(v[0]), s.pswpout = opt(v[1]);
  });
  guarded(errors, "proc.swaps", [&] {
    const std::string_view text = swaps_.read(buf_);
    Opt zram, swapfile = opt(hk::swap_used_kib(text, swaps_.path(), swapfile_path_));
    // Not swapped on (delayed-activation before the trigger): it holds nothing.
    if (!zram_path_.empty()) zram = opt(hk::swap_used_kib(text, swaps_.path(), zram_path_).value_or(0));
    s.zram_swap_used_kib = zram, s.swapfile_used_kib = swapfile;
  });
  if (!zram_) return;
  guarded(errors, "zram.mm_stat", [&] {
    if (whole_u64(zram_->initstate.read(buf_), zram_->initstate.path(), "initstate") == 0) {
      s.zram_orig_data_bytes = s.zram_compr_data_bytes = s.zram_mem_used_bytes = 0;
      return;
    }
    const auto m = hk::parse_zram_mm_stat(zram_->mm_stat.read(buf_), zram_->mm_stat.path());
    s.zram_orig_data_bytes = opt(m.orig_data_size_bytes);
    s.zram_compr_data_bytes = opt(m.compr_data_size_bytes);
    s.zram_mem_used_bytes = opt(m.mem_used_total_bytes);
  });
}

void TelemetrySampler::read_steal(TelemetrySample& s, nlohmann::json& errors) {
  try {
    s.steal_us = parse_steal_us(stat_.read(buf_), user_hz());
  } catch (const hk::IoError&) {  // steal_us stays NULL, named below
  }
  if (!s.steal_us) errors["proc.stat"] = "cpu steal unreadable";
}

void TelemetrySampler::read_cpu(TelemetrySample& s, nlohmann::json& errors) {
  if (kswapd_.empty()) errors["proc.kswapd"] = "no kswapd thread found in /proc";
  guarded(errors, "proc.kswapd", [&] {
    std::int64_t ticks = 0;
    for (auto& f : kswapd_) {
      const auto t = parse_pid_cpu_ticks(f.read(buf_));
      if (!t) throw hk::ParseError(f.path(), 1, "utime, stime", "fields 14 and 15 after the comm are not numbers");
      ticks += *t;
    }
    if (!kswapd_.empty()) s.kswapd_cpu_us = ticks * 1'000'000 / user_hz_;
  });
  auto cpu_stat = [&](const char* what, CgroupFiles& c, Opt& usage, Opt& system) {
    guarded(errors, what, [&] {
      const auto u = parse_cpu_stat_usage(c.cpu_stat.read(buf_), c.cpu_stat.path());
      usage = u.usage_us, system = u.system_us;
    });
  };
  cpu_stat("bg.cpu.stat", bg_, s.bg_cpu_usage_us, s.bg_cpu_system_us);
  cpu_stat("fg.cpu.stat", fg_, s.fg_cpu_usage_us, s.fg_cpu_system_us);
}

TelemetrySample TelemetrySampler::sample(std::int64_t t_ns, const std::string& phase) {
  TelemetrySample s;
  s.t_ns = t_ns;
  s.phase = phase;
  const auto t0 = hk::monotonic_ns();
  nlohmann::json errors;  // null (nothing allocated) until a read fails
  read_pressure(s, errors);
  read_memory(s, errors);
  read_swap(s, errors);
  read_steal(s, errors);
  read_cpu(s, errors);
  s.extra["read_duration_ns"] = hk::monotonic_ns() - t0;
  if (!errors.is_null()) s.extra["errors"] = std::move(errors);
  return s;
}

}  // namespace harness::case_
