// The VM's state between cases (vm_state.hpp).
#include "harness/case/host/vm_state.hpp"

#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "harness/json/optional.hpp"
#include "harness/kernel/errors.hpp"
#include "harness/kernel/keyed.hpp"
#include "harness/kernel/procfs.hpp"
#include "harness/kernel/text.hpp"
#include "harness/kernel/zram_owner.hpp"

namespace harness::case_ {

namespace {
using harness::json::or_null;
std::optional<std::int64_t> cast(std::optional<std::uint64_t> v) {
  return v ? std::optional<std::int64_t>(static_cast<std::int64_t>(*v)) : std::nullopt;
}
}  // namespace

nlohmann::json VmState::to_json() const {
  return {{"mem_available_kib", or_null(mem_available_kib)},
          {"mem_total_kib", or_null(mem_total_kib)},
          {"nr_descendants", or_null(nr_descendants)},
          {"nr_dying_descendants", or_null(nr_dying_descendants)}};
}

void settle_vm(const harness::kernel::Fs& fs, std::vector<StepRecord>& steps) {
  // drop_caches drops clean pages only: write back first (the canary DB, traces and
  // bundles are dirty after a case; measured: ~40 MiB less MemAvailable without it).
  if (fs.root() == "/") {
    steps.push_back(timed_step("sync", [] {
      ::sync();
      return harness::kernel::WriteResult{};
    }));
  }
  steps.push_back(timed_step("drop_caches 3", [&] { return fs.write("proc/sys/vm/drop_caches", "3"); }));
  steps.push_back(timed_step("compact_memory", [&] { return fs.write("proc/sys/vm/compact_memory", "1"); }));
}

VmState read_vm_state(const harness::kernel::Fs& fs) {
  VmState s;
  try {
    auto mi = harness::kernel::read_meminfo(fs);
    s.mem_available_kib = cast(mi.get("MemAvailable"));
    s.mem_total_kib = cast(mi.get("MemTotal"));
  } catch (const harness::kernel::Error&) {
    // fields stay NULL: check_vm_baseline() then records the baseline as not judged
  }
  if (auto r = fs.try_read("sys/fs/cgroup/cgroup.stat"); r.ok()) {
    try {
      auto kv = harness::kernel::parse_keyed(r.text, fs.path("sys/fs/cgroup/cgroup.stat").string());
      s.nr_descendants = cast(kv.get("nr_descendants"));
      s.nr_dying_descendants = cast(kv.get("nr_dying_descendants"));
    } catch (const harness::kernel::Error&) {
      // cgroup.stat unparsable: descendant counts stay NULL (unknown)
    }
  }
  return s;
}

std::optional<VmBaseline> read_vm_baseline(const harness::kernel::Fs& fs) {
  auto r = fs.try_read(kVmBaselineFile);
  if (!r.ok()) return std::nullopt;
  VmBaseline b;
  bool have = false;
  for (auto line : harness::kernel::split_lines(r.text)) {
    auto w = harness::kernel::split_ws(line);
    if (w.size() != 2) continue;
    if (w[0] == "mem_available_kib") {
      try {
        b.mem_available_kib = static_cast<std::int64_t>(harness::kernel::parse_u64(w[1], kVmBaselineFile, 1, "mem_available_kib"));
        have = true;
      } catch (const harness::kernel::Error&) {
        return std::nullopt;
      }
    } else if (w[0] == "case_id") {
      b.case_id = std::string(w[1]);
    } else if (w[0] == "boot_id") {
      b.boot_id = std::string(w[1]);
    }
  }
  if (!have || b.boot_id != harness::kernel::current_boot_id(fs)) return std::nullopt;
  return b;
}

void write_vm_baseline(const harness::kernel::Fs& fs, const VmBaseline& b) {
  const auto dst = fs.path(kVmBaselineFile);
  std::error_code ec;
  std::filesystem::create_directories(dst.parent_path(), ec);
  if (ec) throw harness::kernel::IoError(dst.parent_path().string(), ec.value(), "mkdir");
  std::ofstream f(dst, std::ios::trunc);
  f << "mem_available_kib " << b.mem_available_kib << "\ncase_id " << b.case_id << "\n";
  if (!b.boot_id.empty()) f << "boot_id " << b.boot_id << "\n";
  f.flush();
  if (!f) throw harness::kernel::IoError(dst.string(), EIO, "write");
}

nlohmann::json BaselineCheck::to_json() const {
  return {{"judged", judged},
          {"within", within},
          {"tolerance_kib", tolerance_kib},
          {"shortfall_kib", shortfall_kib},
          {"problem", problem.empty() ? nlohmann::json() : nlohmann::json(problem)}};
}

BaselineCheck check_vm_baseline(const VmState& now, const VmBaseline& baseline) {
  BaselineCheck c;
  if (!now.mem_available_kib || !now.mem_total_kib) return c;
  c.judged = true;
  c.tolerance_kib = static_cast<std::int64_t>(kBaselineToleranceFraction * static_cast<double>(*now.mem_total_kib));
  c.shortfall_kib = baseline.mem_available_kib - *now.mem_available_kib;
  c.within = c.shortfall_kib <= c.tolerance_kib;
  if (!c.within)
    c.problem = fmt::format(
        "MemAvailable {} MiB after drop_caches and compaction is {} MiB below the VM's first-case baseline {} MiB "
        "(case {}; tolerance {} MiB = {:.0f}% of MemTotal)",
        *now.mem_available_kib / 1024, c.shortfall_kib / 1024, baseline.mem_available_kib / 1024, baseline.case_id,
        c.tolerance_kib / 1024, kBaselineToleranceFraction * 100);
  return c;
}

VmStart record_vm_start(const harness::kernel::Fs& fs, const std::string& case_id) {
  VmStart v;
  settle_vm(fs, v.steps);
  v.state = read_vm_state(fs);
  v.baseline = read_vm_baseline(fs);
  if (!v.baseline && v.state.mem_available_kib) {
    v.baseline = VmBaseline{*v.state.mem_available_kib, case_id, harness::kernel::current_boot_id(fs)};
    try {
      write_vm_baseline(fs, *v.baseline);
      v.established_baseline = true;
    } catch (const harness::kernel::Error& e) {
      v.steps.push_back({"write VM baseline", 0, EIO, e.what()});
    }
  }
  return v;
}

}  // namespace harness::case_
