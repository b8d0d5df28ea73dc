// Restoration (harness/case/host/restoration.hpp) as a function of its inputs, over trees the
// test writes file by file (the files a 6.1 guest shows, with the values each scenario
// needs): a clean restoration after a setup that failed before the parent cgroup existed,
// and one that fails part-way (zram's swapoff ENOMEM, bg's rmdir EBUSY) with a real
// workload process to stop, a VM below its baseline and a variant knob that cannot be
// written back: every later step still runs, and the verdict names each problem.
// swapon/swapoff/mkswap are always stubbed: the tests run as root.
#include <gtest/gtest.h>


#include <algorithm>
#include <cerrno>
#include <csignal>
#include <filesystem>

#include "harness/case/host/backend.hpp"
#include "harness/case/host/case_cgroups.hpp"
#include "harness/case/host/children.hpp"
#include "harness/case/host/restoration.hpp"
#include "harness/case/spec/variant.hpp"
#include "harness/kernel/zram_owner.hpp"
#include "tests/unit/case/case_scratch.hpp"
#include "tests/unit/kernel/tmp_tree.hpp"

using case_test::kSwapfile;
using harness::kernel::FaultScope;
using harness::kernel::FsOp;

namespace {

/// The host files restoration reads everywhere: swaps, meminfo, the VM-settle knobs, the
/// root cgroup.stat, the boot id and a swappiness sysctl for the variant.
void write_host(const kernel_test::TmpTree& t, const std::string& swaps, long mem_available_kib) {
  t.put("proc/swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n" + swaps);
  t.put("proc/meminfo", "MemTotal:        1000000 kB\nMemFree:          500000 kB\nMemAvailable:     " +
                            std::to_string(mem_available_kib) + " kB\n");
  t.put("proc/sys/vm/drop_caches", "");
  t.put("proc/sys/vm/compact_memory", "");
  t.put("proc/sys/vm/swappiness", "60\n");
  t.put("proc/sys/kernel/random/boot_id", "boot-1\n");
  t.put("sys/fs/cgroup/cgroup.stat", "nr_descendants 3\nnr_dying_descendants 1\n");
}

/// The case's cgroups as setup left them: parent (cgroup.events unpopulated, so cgroup.kill
/// returns at once), bg with its memory.events (`oom`, `oom_kill` = `ooms`), fg empty.
void write_cgroups(const kernel_test::TmpTree& t, int ooms) {
  const std::string p = "sys/fs/cgroup/harness/";
  t.put(p + "cgroup.events", "populated 0\nfrozen 0\n");
  t.put(p + "cgroup.kill", "");
  t.put(p + "cgroup.procs", "");
  t.put(p + "bg/cgroup.procs", "");
  const std::string n = std::to_string(ooms);
  t.put(p + "bg/memory.events", "low 0\nhigh 0\nmax 12\noom " + n + "\noom_kill " + n + "\noom_group_kill 0\n");
  std::filesystem::create_directories(t.dir() / p / "fg");
}

/// zram-control handing out zram1 and a zram1 that reads as configured (disksize 512 MiB:
/// the kernel's value after prepare; its write is stubbed), and a valid swapfile.
void write_backend(const kernel_test::TmpTree& t) {
  t.put("sys/class/zram-control/hot_add", "1\n");
  t.put("sys/class/zram-control/hot_remove", "");
  t.put("sys/block/zram1/initstate", "0\n");
  t.put("sys/block/zram1/disksize", "536870912\n");
  t.put("sys/block/zram1/comp_algorithm", "lzo [lzo-rle] lz4 lz4hc zstd\n");
  t.put("sys/block/zram1/reset", "");
  t.put(kSwapfile.substr(1), case_test::swapfile_image());
}

using case_test::backend_spec;
using case_test::cgroups_spec;
using case_test::stub_swap;

bool has_problem(const harness::case_::RestorationVerdict& v, const std::string& needle) {
  return std::any_of(v.problems.begin(), v.problems.end(),
                     [&](const std::string& p) { return p.find(needle) != std::string::npos; });
}

std::vector<std::string> step_names(const std::vector<harness::case_::StepRecord>& steps) {
  std::vector<std::string> out;
  for (const auto& s : steps) out.push_back(s.step);
  return out;
}

}  // namespace

TEST(Restoration, AfterASetupThatFailedBeforeTheParentExistedItIsClean) {
  kernel_test::TmpTree t;
  write_host(t, "", 850000);
  harness::kernel::Fs fs(t.dir());
  harness::case_::CaseCgroups cg(fs, cgroups_spec());  // the parent's mkdir failed: nothing exists
  harness::case_::Backend backend(fs, backend_spec(), harness::case_::ZramAtStart::On);  // never prepared
  harness::case_::Children children((t.dir() / "work").string());
  harness::case_::VariantSpec vs;
  vs.name = "candidate";
  vs.sysctls = {{"vm.swappiness", "20"}};
  harness::case_::VariantApplier variant(fs, vs);
  ASSERT_TRUE(variant.apply());
  ASSERT_EQ(t.get("proc/sys/vm/swappiness"), "20\n");
  harness::case_::RestorationInputs in{fs, cg, backend, children, 120, {}, harness::case_::VmBaseline{900000, "case-0", "boot-1"},
                              &variant};
  std::vector<harness::case_::StepRecord> steps;
  const auto r = harness::case_::restore_case(in, steps);

  EXPECT_TRUE(r.verdict.clean) << r.verdict.to_json().dump();
  EXPECT_TRUE(r.row.clean);
  EXPECT_EQ(step_names(steps),
            (std::vector<std::string>{"stop processes (SIGTERM, wait)", "drop_caches 3", "compact_memory"}));
  for (const auto& s : steps) EXPECT_EQ(s.err, 0) << s.to_json().dump();
  EXPECT_EQ(t.get("proc/sys/vm/drop_caches"), "3");
  EXPECT_EQ(t.get("proc/sys/vm/swappiness"), "60\n") << "the variant's knob was not written back";
  EXPECT_FALSE(r.zram) << "no device was taken";
  EXPECT_FALSE(r.oom.bg_kills) << "no memory.events to read: unknown, not 0";
  ASSERT_TRUE(r.baseline_check);
  EXPECT_TRUE(r.baseline_check->judged);
  EXPECT_TRUE(r.baseline_check->within);
  EXPECT_EQ(r.baseline_check->shortfall_kib, 50000);
  EXPECT_EQ(r.vm_end.nr_dying_descendants, 1);
  EXPECT_EQ(r.phase.phase, "restoration");
  EXPECT_EQ(r.phase.start_ns, r.row.start_ns);
  EXPECT_EQ(r.phase.end_ns, r.row.end_ns);
  EXPECT_GE(r.row.end_ns, r.row.start_ns);
  EXPECT_EQ(r.row.detail["budget_s"], 120);
  EXPECT_EQ(r.row.detail["over_budget"], false);
  EXPECT_EQ(r.row.detail["steps"].size(), steps.size());
}

TEST(Restoration, AFailurePartWayIsRecordedTheLaterStepsStillRunAndEveryProblemIsNamed) {
  kernel_test::TmpTree t;
  // /proc/swaps after teardown as the kernel shows it when zram's swapoff failed.
  write_host(t, "/dev/zram1                              partition\t524284\t\t40960\t\t100\n", 700000);
  write_cgroups(t, 2);
  write_backend(t);
  harness::kernel::Fs fs(t.dir());
  FaultScope f;
  f.fail("/dev/zram1", ENOMEM, FsOp::Swapoff);  // before the stubs: the first match wins
  f.fail("harness/bg", EBUSY, FsOp::Rmdir);
  f.fail("zram1/disksize", 0, FsOp::Write);     // the file keeps the kernel's 536870912
  f.fail("harness/bg/cgroup.procs", 0, FsOp::Write);
  f.fail("oom_score_adj", 0, FsOp::Write);
  stub_swap(f);

  harness::case_::CaseCgroups cg(fs, cgroups_spec());
  harness::case_::Backend backend(fs, backend_spec(), harness::case_::ZramAtStart::On);
  std::vector<harness::case_::StepRecord> setup;
  ASSERT_NO_THROW(backend.prepare(setup));
  harness::case_::Children children((t.dir() / "work").string());
  std::filesystem::create_directories(t.dir() / "work");
  const pid_t pid = children.spawn("pressure-gen", {"/bin/sleep", "30"}, cg.bg()).pid;
  harness::case_::VariantSpec vs;
  vs.name = "candidate";
  vs.sysctls = {{"vm.swappiness", "20"}};
  harness::case_::VariantApplier variant(fs, vs);
  ASSERT_TRUE(variant.apply());
  f.fail("proc/sys/vm/swappiness", EPERM, FsOp::Write);  // writing it back fails

  harness::case_::OomCounts start;
  start.bg_oom = start.bg_oom_kill = 0;
  harness::case_::RestorationInputs in{fs, cg, backend, children, 120, start, harness::case_::VmBaseline{900000, "case-0", "boot-1"},
                              &variant};
  std::vector<harness::case_::StepRecord> steps;
  harness::case_::RestorationResult r;
  ASSERT_NO_THROW(r = harness::case_::restore_case(in, steps));

  // Every step ran, in order, each with its errno; none after a failure was skipped.
  EXPECT_EQ(step_names(steps), (std::vector<std::string>{
                                   "stop processes (SIGTERM, wait)", "cgroup.kill sys/fs/cgroup/harness",
                                   "swapoff /dev/zram1", "swapoff " + kSwapfile, "rmdir sys/fs/cgroup/harness/fg",
                                   "rmdir sys/fs/cgroup/harness/bg", "rmdir sys/fs/cgroup/harness",
                                   "drop_caches 3", "compact_memory"}));
  ASSERT_EQ(steps.size(), 9u);
  EXPECT_EQ(steps[2].err, ENOMEM);
  EXPECT_EQ(steps[3].err, 0);
  EXPECT_EQ(steps[4].err, 0);
  EXPECT_EQ(steps[5].err, EBUSY);
  EXPECT_NE(steps[6].err, 0) << "the parent still holds bg";
  // zram still swapped on: never reset or removed, and its marker stays for the next case.
  ASSERT_TRUE(r.zram);
  EXPECT_FALSE(r.zram->released);
  ASSERT_TRUE(harness::kernel::owned_zram(fs));
  EXPECT_EQ(harness::kernel::owned_zram(fs)->id, 1);
  // The workload was stopped by SIGTERM and reaped: not a stray process.
  ASSERT_EQ(children.all().size(), 1u);
  ASSERT_TRUE(children.all()[0].exit);
  EXPECT_EQ(children.all()[0].exit->signal, SIGTERM);
  EXPECT_TRUE(children.all()[0].term_ns);
  EXPECT_FALSE(has_problem(r.verdict, "stray process " + std::to_string(pid)));
  // OOM deltas from bg memory.events; fg has none to read.
  EXPECT_EQ(r.oom.bg_kills, 2);
  EXPECT_EQ(r.oom.bg_events, 2);
  EXPECT_FALSE(r.oom.fg_kills);

  EXPECT_FALSE(r.verdict.clean);
  EXPECT_FALSE(r.row.clean);
  EXPECT_TRUE(has_problem(r.verdict, "swap device /dev/zram1 enabled by the case is still active (40960 KiB used)"));
  EXPECT_TRUE(has_problem(r.verdict, "cgroup sys/fs/cgroup/harness/bg still exists"));
  EXPECT_TRUE(has_problem(r.verdict, "cgroup sys/fs/cgroup/harness still exists"));
  EXPECT_FALSE(has_problem(r.verdict, "harness/fg still exists"));
  EXPECT_TRUE(has_problem(r.verdict, "zram not reset: disksize 536870912 bytes"));
  EXPECT_TRUE(has_problem(r.verdict, "zram device /dev/zram1 created by the harness still exists"));
  EXPECT_TRUE(has_problem(r.verdict, "MemAvailable 683 MiB"));
  EXPECT_TRUE(has_problem(r.verdict, "vm.swappiness not restored to '60'"));
  EXPECT_EQ(r.verdict.problems.size(), 7u) << r.verdict.to_json().dump();
  ASSERT_TRUE(r.baseline_check);
  EXPECT_FALSE(r.baseline_check->within);
  EXPECT_EQ(r.row.detail["verdict"], r.verdict.to_json());
}
