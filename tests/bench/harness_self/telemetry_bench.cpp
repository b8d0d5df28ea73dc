// One telemetry sample over the captured 6.1 guest tree (tests/fixtures/6.1.0-57-cloud-amd64/root,
// plus a proc/stat written here in the kernel's format), side by side in one run:
//   BM_Sample        TelemetrySampler::sample as the executor calls it (files kept open, pread);
//   BM_PerCallReads  the same fields read the way the sampler did before (open, read, close and
//                    a full parse per file through the typed per-call readers of hk_kernel).
// Regular files stand in for kernel files, so this measures the harness's own user-space and
// syscall cost per sample, not what the kernel spends generating the text (that part is seen
// in a guest: telemetry extra_json.sample_cpu_ns, tests/bench/harness_self/run_bench.sh).
// Run: build/tests/bench/harness_self/telemetry_bench [--benchmark_min_time=0.2]
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "harness/case/host/confounds.hpp"
#include "harness/case/run/telemetry.hpp"
#include "harness/kernel/kernel.hpp"

namespace {
namespace hk = harness::kernel;

// A copy of the capture with a proc/stat (the capture predates steal sampling).
const std::filesystem::path& tree() {
  static const std::filesystem::path dir = [] {
    const auto d = std::filesystem::temp_directory_path() / ("telemetry-bench-" + std::to_string(::getpid()));
    std::filesystem::remove_all(d);
    std::filesystem::copy(HARNESS_SOURCE_DIR "/tests/fixtures/6.1.0-57-cloud-amd64/root", d,
                          std::filesystem::copy_options::recursive);
    std::ofstream(d / "proc/stat") << "cpu  81232 0 60211 402111 1201 0 3112 1234 0 0\n"
                                      "cpu0 81232 0 60211 402111 1201 0 3112 1234 0 0\n"
                                      "intr 2345678 0 9 0 0 0 0 0 0 0 0 0 0 156 0 0 0 0 0 0 0 0 0 0 0\n"
                                      "ctxt 4567890\nbtime 1700000000\nprocesses 2345\n"
                                      "procs_running 2\nprocs_blocked 0\nsoftirq 1234567 0 234 0 0 0 0 1 0 0 0\n";
    std::atexit([] { std::filesystem::remove_all(tree()); });
    return d;
  }();
  return dir;
}

void BM_Sample(benchmark::State& st) {
  hk::Fs fs(tree());
  hk::Cgroup parent(fs, "sys/fs/cgroup/harness");
  hk::Zram zram(fs, 0);
  harness::case_::TelemetrySampler s(fs, parent.child("bg"), parent.child("fg"), &zram, "/dev/zram0",
                                     "/var/lib/harness/swapfile");
  const std::string phase = "pressure";
  for (auto _ : st) benchmark::DoNotOptimize(s.sample(1, phase));
}
BENCHMARK(BM_Sample);

// The former sampler's reads (main at 82276c8, harness/case/run/telemetry.cpp): every file opened,
// read whole, closed and parsed into a full map each time. Errors are not collected here.
void BM_PerCallReads(benchmark::State& st) {
  hk::Fs fs(tree());
  hk::Cgroup parent(fs, "sys/fs/cgroup/harness");
  const hk::Cgroup bg = parent.child("bg"), fg = parent.child("fg");
  hk::Zram zram(fs, 0);
  for (auto _ : st) {
    std::uint64_t sum = 0;
    for (const hk::Cgroup* c : {&bg, &fg}) {
      sum += c->memory_pressure().some_total_us() + c->cpu_pressure().some_total_us() +
             c->io_pressure().some_total_us();
      sum += c->memory_current_bytes() + c->memory_swap_current_bytes();
      const auto m = c->memory_stat();
      sum += m.pgsteal().value_or(0) + m.pgscan().value_or(0) + m.workingset_refault_anon().value_or(0) +
             m.workingset_refault_file().value_or(0) + m.pgmajfault().value_or(0);
      const auto e = c->memory_events();
      sum += e.oom().value_or(0) + e.oom_kill().value_or(0);
    }
    for (auto r : {hk::PsiResource::Memory, hk::PsiResource::Cpu, hk::PsiResource::Io})
      sum += hk::read_system_psi(fs, r).some_total_us();
    const auto v = hk::read_vmstat(fs);
    sum += v.get("pswpin").value_or(0) + v.get("pswpout").value_or(0);
    for (const auto& d : hk::read_swaps(fs)) sum += d.used_kib;
    if (zram.initialized()) sum += zram.mm_stat().orig_data_size_bytes;
    sum += harness::case_::read_steal_us(fs).value_or(0);
    benchmark::DoNotOptimize(sum);
  }
}
BENCHMARK(BM_PerCallReads);

}  // namespace

BENCHMARK_MAIN();
