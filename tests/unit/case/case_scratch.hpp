#pragma once
// The scratch host of the case unit tests: a copy of the 6.1 guest capture
// (tests/fixtures/6.1.0-57-cloud-amd64) with a valid swapfile and a hot_add that hands out
// zram1, plus the specs and executor options that run a whole case over it. swap syscalls
// are always stubbed there (stub_swap): the tests run as root and must never reach the
// real swapon(2)/swapoff(2). runnable_host: a host on which a whole case runs to its
// end (workload stand-ins that leave a trace). Header-only; include as "tests/unit/case/case_scratch.hpp".
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "canaries/trace_file.hpp"
#include "harness/case/host/backend.hpp"
#include "harness/case/host/case_cgroups.hpp"
#include "harness/case/run/executor.hpp"
#include "harness/case/spec/spec.hpp"
#include "harness/kernel/fs.hpp"
#include "results/db.hpp"
#include "tests/common/agent_support.hpp"
#include "tests/common/slurp.hpp"

namespace case_test {

namespace fs = std::filesystem;
using harness::kernel::FaultScope;
using harness::kernel::FsOp;
inline const std::string kCapture = std::string(HARNESS_SOURCE_DIR) + "/tests/fixtures/6.1.0-57-cloud-amd64/root";
inline const std::string kSwapfile = "/var/lib/harness/swapfile";

/// A valid swapfile of 16 pages (written zeros: no holes; the mkswap signature), as
/// harness::kernel::validate_swapfile wants it.
inline std::string swapfile_image() {
  const long page = ::sysconf(_SC_PAGESIZE);
  std::string img(static_cast<size_t>(page) * 16, '\0');
  std::memcpy(&img[static_cast<size_t>(page) - 10], "SWAPSPACE2", 10);
  return img;
}

/// A scratch copy of the capture (removed at destruction).
class Scratch {
 public:
  Scratch() {
    std::string tmpl = (fs::temp_directory_path() / "hk-case-fault-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp");
    dir_ = tmpl;
    fs::copy(kCapture, dir_ / "root", fs::copy_options::recursive);
    fs::create_directories(root() / "var/lib/harness");
    std::ofstream(root() / "var/lib/harness/swapfile", std::ios::binary) << swapfile_image();
    // hot_add hands out the capture's unconfigured zram1 (the capture's zram0 is
    // initialised and swapped on: a device the harness must never touch).
    put("sys/class/zram-control/hot_add", "1\n");
    put("proc/sys/kernel/random/boot_id", "case-fault-boot\n");
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path root() const { return dir_ / "root"; }
  const fs::path& dir() const { return dir_; }
  void put(const std::string& rel, const std::string& text) const {
    fs::create_directories((root() / rel).parent_path());
    std::ofstream(root() / rel) << text;
  }
  std::string get(const std::string& rel) const {
    return test_support::slurp(root() / rel);
  }

 private:
  fs::path dir_;
};

inline harness::case_::BackendSpec backend_spec() {
  harness::case_::BackendSpec b;
  b.zram_disksize_bytes = 512ll << 20;
  b.zram_algorithm = "lzo-rle";
  b.zram_priority = 100;
  b.swapfile_path = kSwapfile;
  b.swapfile_priority = 10;
  return b;
}

/// Stubs every swap syscall on the case's devices (pretend success).
inline void stub_swap(FaultScope& f) {
  for (FsOp op : {FsOp::Swapon, FsOp::Swapoff, FsOp::Mkswap}) {
    f.fail("/dev/zram1", 0, op);
    f.fail(kSwapfile, 0, op);
  }
}

inline const harness::case_::StepRecord* find_step(const std::vector<harness::case_::StepRecord>& steps, const std::string& prefix) {
  for (const auto& s : steps)
    if (s.step.rfind(prefix, 0) == 0) return &s;
  return nullptr;
}

inline std::string dump(const std::vector<harness::case_::StepRecord>& steps) {
  std::string out;
  for (const auto& s : steps) out += s.to_json().dump() + "\n";
  return out;
}

inline harness::kernel::BusyRetryPolicy fast_retry() { return harness::kernel::BusyRetryPolicy{{1'000'000, 1'000'000, 1'000'000}}; }

inline harness::case_::CgroupsSpec cgroups_spec() {
  harness::case_::CgroupsSpec c;
  c.parent = "harness";
  c.bg_memory_max_bytes = 200ll << 20;
  return c;
}

/// A host with no leftovers (no harness cgroup, no swap active) and workload stand-ins
/// that leave t.dir()/ran if anything ever starts them; returns the executor options.
inline harness::case_::ExecutorOptions executor_host(const Scratch& t) {
  fs::remove_all(t.root() / "sys/fs/cgroup/harness");
  t.put("proc/swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n");
  t.put("proc/self/oom_score_adj", "0\n");
  t.put("sys/block/zram0/initstate", "0\n");
  const fs::path bin = t.dir() / "bin";
  fs::create_directories(bin);
  for (const char* b : {"pressure-gen", "canary-compute", "canary-sqlite"}) {
    std::ofstream(bin / b) << "#!/bin/sh\ntouch " << (t.dir() / "ran").string() << "\n";
    fs::permissions(bin / b, fs::perms::owner_all);
  }
  std::ofstream(t.dir() / "canary.db") << "x";
  harness::case_::ExecutorOptions o;
  o.out_dir = (t.dir() / "out").string();
  o.root = t.root().string();
  o.bin_dir = bin.string();
  o.accelerator = "tcg";
  o.skip_qualification = true;
  o.start_lead_ns = 0;
  return o;
}

/// The valid spec `id` with 1 s phases and its canary DB in `t`, as JSON.
inline nlohmann::json executor_spec_json(const Scratch& t, const std::string& id) {
  auto j = test_support::valid_spec(id);
  j["canaries"]["sqlite_db_path"] = (t.dir() / "canary.db").string();
  j["phases_s"] = {{"warmup", 1}, {"pressure", 1}, {"recovery", 1}};
  return j;
}

inline harness::case_::CaseSpec executor_spec(const Scratch& t, const std::string& id) {
  return harness::case_::parse_spec(executor_spec_json(t, id).dump(), "test");
}

/// Runs the A/B candidate case `id` (variant name "candidate", pair
/// vm0/fast-structured/1/bounded-reclaim, plus `knobs`: sysctls / sysfs / cmdline) on a host
/// with no leftovers in `t` (executor_host), under the caller's faults in `f` (set before the
/// call: the first match wins) and the swap stubs.
inline harness::case_::ExecutorResult run_candidate(const Scratch& t, FaultScope& f, const std::string& id, nlohmann::json knobs) {
  const auto o = executor_host(t);
  auto j = executor_spec_json(t, id);
  knobs["name"] = "candidate";
  knobs["pair_id"] = "vm0/fast-structured/1/bounded-reclaim";
  j["variant"] = knobs;
  stub_swap(f);
  return harness::case_::run_case(harness::case_::parse_spec(j.dump(), "test"), o);
}

inline nlohmann::json bundle_outcome(const std::string& path) {
  results::Db db(path, results::Db::Mode::ReadOnly);
  results::Stmt c(db, "SELECT outcome_json FROM cases");
  if (!c.step()) return nullptr;
  return nlohmann::json::parse(c.text(0));
}

/// A host on which a whole case runs: the case's cgroups are real (empty) directories of the
/// scratch tree, so the writes into them that a kernel would take are stubbed (err 0), and
/// the workload stand-ins copy a prepared trace to their --trace argument. Restoration
/// gets a 1 s budget (the empty parent has no cgroup.events: cgroup.kill's wait times out).
struct RunnableHost {
  harness::case_::ExecutorOptions o;
  nlohmann::json spec;
};
inline RunnableHost runnable_host(const Scratch& t, FaultScope& f, const std::string& id, const std::string& configuration) {
  RunnableHost h{executor_host(t), executor_spec_json(t, id)};
  h.spec["configuration"] = configuration;
  h.spec["restoration_timeout_s"] = 1;
  for (const char* name : {"compute", "sqlite"}) {
    canaries::TraceHeader hd{name, 100'000'000, 1'000'000'000, 0};
    std::vector<canaries::TraceRecord> recs;
    for (std::uint64_t s = 0; s < 3; ++s)
      recs.push_back({s, 1'000'000'000 + static_cast<std::int64_t>(s) * 100'000'000,
                      1'000'100'000 + static_cast<std::int64_t>(s) * 100'000'000,
                      1'002'000'000 + static_cast<std::int64_t>(s) * 100'000'000, 1, 0, 1, 0});
    canaries::write_trace((t.dir() / (std::string(name) + ".trace-src")).string(), hd, recs);
    const auto bin = t.dir() / "bin" / (std::string("canary-") + name);
    std::ofstream(bin) << "#!/bin/sh\nprev=\nfor a; do [ \"$prev\" = --trace ] && cp " << (t.dir() / name).string()
                       << ".trace-src \"$a\"; prev=$a; done\necho '{}'\n";
    std::filesystem::permissions(bin, std::filesystem::perms::owner_all);
  }
  std::ofstream(t.dir() / "bin" / "pressure-gen") << "#!/bin/sh\necho '{\"allocated_mib\": 600, \"allocation_elapsed_s\": 20}'\n";
  for (const char* w : {"harness/cgroup.subtree_control", "harness/bg/memory.max", "harness/bg/cgroup.procs",
                        "harness/fg/cgroup.procs", "oom_score_adj", "harness/cgroup.kill"})
    f.fail(w, 0, FsOp::Write);
  stub_swap(f);
  return h;
}

}  // namespace case_test
