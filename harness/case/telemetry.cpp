// 1 Hz telemetry sampler (docs/DESIGN.md "Telemetry at 1 Hz").
#include "harness/case/telemetry.hpp"

#include <exception>

#include "harness/case/confounds.hpp"
#include "harness/kernel/procfs.hpp"
#include "harness/kernel/swap.hpp"

namespace harness::case_ {

TelemetrySampler::TelemetrySampler(harness::kernel::Fs fs, harness::kernel::Cgroup bg, harness::kernel::Cgroup fg, const harness::kernel::Zram* zram,
                                   std::string zram_path, std::string swapfile_path)
    : fs_(std::move(fs)),
      bg_(std::move(bg)),
      fg_(std::move(fg)),
      zram_(zram),
      zram_path_(std::move(zram_path)),
      swapfile_path_(std::move(swapfile_path)) {}

namespace {
using Opt = std::optional<std::int64_t>;
Opt opt(std::optional<std::uint64_t> v) { return v ? Opt(static_cast<std::int64_t>(*v)) : std::nullopt; }
Opt opt(std::uint64_t v) { return static_cast<std::int64_t>(v); }
}  // namespace

TelemetrySample TelemetrySampler::sample(std::int64_t t_ns, const std::string& phase) const {
  TelemetrySample s;
  s.t_ns = t_ns;
  s.phase = phase;
  const auto t0 = harness::kernel::monotonic_ns();
  nlohmann::json errors = nlohmann::json::object();
  auto guard = [&](const char* what, auto&& fn) {
    try {
      fn();
    } catch (const std::exception& e) {
      errors[what] = e.what();
    }
  };
  // bg PSI first: it is what the controller reads, closest to the tick.
  guard("bg.memory.pressure", [&] {
    auto p = bg_.memory_pressure();
    s.bg_some_us = opt(p.some_total_us());
    s.bg_full_us = opt(p.full_total_us());
    s.read_ns = harness::kernel::monotonic_ns();  // the controller's window length (SPEC.md v2)
  });
  guard("fg.memory.pressure", [&] {
    auto p = fg_.memory_pressure();
    s.fg_some_us = opt(p.some_total_us());
    s.fg_full_us = opt(p.full_total_us());
  });
  guard("proc.pressure.memory", [&] {
    auto p = harness::kernel::read_system_psi(fs_, harness::kernel::PsiResource::Memory);
    s.sys_some_us = opt(p.some_total_us());
    s.sys_full_us = opt(p.full_total_us());
  });
  // cpu and io PSI beside memory: a latency difference is then told apart as a memory
  // stall, CPU contention (zram compression and reclaim share the vCPU) or I/O wait.
  auto psi = [&](const char* what, Opt& some, Opt& full, auto&& read) {
    guard(what, [&] {
      const harness::kernel::Psi p = read();
      some = opt(p.some_total_us());
      full = opt(p.full_total_us());
    });
  };
  psi("bg.cpu.pressure", s.bg_cpu_some_us, s.bg_cpu_full_us, [&] { return bg_.cpu_pressure(); });
  psi("bg.io.pressure", s.bg_io_some_us, s.bg_io_full_us, [&] { return bg_.io_pressure(); });
  psi("fg.cpu.pressure", s.fg_cpu_some_us, s.fg_cpu_full_us, [&] { return fg_.cpu_pressure(); });
  psi("fg.io.pressure", s.fg_io_some_us, s.fg_io_full_us, [&] { return fg_.io_pressure(); });
  psi("proc.pressure.cpu", s.sys_cpu_some_us, s.sys_cpu_full_us,
      [&] { return harness::kernel::read_system_psi(fs_, harness::kernel::PsiResource::Cpu); });
  psi("proc.pressure.io", s.sys_io_some_us, s.sys_io_full_us,
      [&] { return harness::kernel::read_system_psi(fs_, harness::kernel::PsiResource::Io); });
  guard("bg.memory.current", [&] { s.bg_current_bytes = opt(bg_.memory_current_bytes()); });
  guard("fg.memory.current", [&] { s.fg_current_bytes = opt(fg_.memory_current_bytes()); });
  guard("bg.memory.swap.current", [&] { s.bg_swap_current_bytes = opt(bg_.memory_swap_current_bytes()); });
  guard("fg.memory.swap.current", [&] { s.fg_swap_current_bytes = opt(fg_.memory_swap_current_bytes()); });
  guard("bg.memory.stat", [&] {
    auto m = bg_.memory_stat();
    s.bg_pgsteal = opt(m.pgsteal());
    s.bg_pgscan = opt(m.pgscan());
    s.bg_workingset_refault_anon = opt(m.workingset_refault_anon());
    s.bg_workingset_refault_file = opt(m.workingset_refault_file());
    s.bg_pgmajfault = opt(m.pgmajfault());
  });
  guard("fg.memory.stat", [&] {
    auto m = fg_.memory_stat();
    s.fg_pgsteal = opt(m.pgsteal());
    s.fg_pgscan = opt(m.pgscan());
    s.fg_workingset_refault_anon = opt(m.workingset_refault_anon());
    s.fg_workingset_refault_file = opt(m.workingset_refault_file());
    s.fg_pgmajfault = opt(m.pgmajfault());
  });
  guard("bg.memory.events", [&] {
    auto e = bg_.memory_events();
    s.bg_oom = opt(e.oom());
    s.bg_oom_kill = opt(e.oom_kill());
  });
  guard("fg.memory.events", [&] {
    auto e = fg_.memory_events();
    s.fg_oom = opt(e.oom());
    s.fg_oom_kill = opt(e.oom_kill());
  });
  guard("proc.vmstat", [&] {
    auto v = harness::kernel::read_vmstat(fs_);
    s.pswpin = opt(v.get("pswpin"));
    s.pswpout = opt(v.get("pswpout"));
  });
  guard("proc.swaps", [&] {
    bool zram_listed = false;
    for (const auto& d : harness::kernel::read_swaps(fs_)) {
      if (!zram_path_.empty() && d.path == zram_path_) s.zram_swap_used_kib = opt(d.used_kib), zram_listed = true;
      if (d.path == swapfile_path_) s.swapfile_used_kib = opt(d.used_kib);
    }
    // Not swapped on (delayed-activation before the trigger): it holds nothing.
    if (!zram_listed && !zram_path_.empty()) s.zram_swap_used_kib = 0;
  });
  if (zram_) {
    guard("zram.mm_stat", [&] {
      if (!zram_->initialized()) {
        s.zram_orig_data_bytes = s.zram_compr_data_bytes = s.zram_mem_used_bytes = 0;
        return;
      }
      auto m = zram_->mm_stat();
      s.zram_orig_data_bytes = opt(m.orig_data_size_bytes);
      s.zram_compr_data_bytes = opt(m.compr_data_size_bytes);
      s.zram_mem_used_bytes = opt(m.mem_used_total_bytes);
    });
  }
  s.steal_us = read_steal_us(fs_);
  if (!s.steal_us) errors["proc.stat"] = "cpu steal unreadable";
  s.extra["read_duration_ns"] = harness::kernel::monotonic_ns() - t0;
  if (!errors.empty()) s.extra["errors"] = errors;
  return s;
}

}  // namespace harness::case_
