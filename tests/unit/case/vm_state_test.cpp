// The VM's state between cases (vm_state.hpp): baseline stored per boot, MemAvailable
// judged against it with the stated tolerance, cgroup.stat read, settle steps recorded
// with errno (never fatal), and an out-of-tolerance reading makes restoration unclean.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "harness/case/host/restoration_check.hpp"
#include "harness/case/host/vm_state.hpp"
#include "harness/kernel/zram_owner.hpp"
#include "tests/common/slurp.hpp"

namespace fs = std::filesystem;

namespace {
class Tree {
 public:
  Tree() {
    std::string tmpl = (fs::temp_directory_path() / "hk-vm-state-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp");
    dir = tmpl;
    put("proc/meminfo", "MemTotal:        1000000 kB\nMemFree:          500000 kB\nMemAvailable:     800000 kB\n");
    put("sys/fs/cgroup/cgroup.stat", "nr_descendants 4\nnr_dying_descendants 2\n");
    put("proc/sys/kernel/random/boot_id", "boot-a\n");
    put("proc/sys/vm/drop_caches", "");
    put("proc/sys/vm/compact_memory", "");
  }
  ~Tree() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  void put(const std::string& rel, const std::string& text) const {
    fs::create_directories((dir / rel).parent_path());
    std::ofstream(dir / rel) << text;
  }
  std::string get(const std::string& rel) const {
    return test_support::slurp(dir / rel);
  }
  fs::path dir;
};
}  // namespace

TEST(VmState, ReadsMemAvailableAndCgroupStat) {
  Tree t;
  auto s = harness::case_::read_vm_state(harness::kernel::Fs(t.dir));
  EXPECT_EQ(s.mem_available_kib, 800000);
  EXPECT_EQ(s.mem_total_kib, 1000000);
  EXPECT_EQ(s.nr_descendants, 4);
  EXPECT_EQ(s.nr_dying_descendants, 2);
  fs::remove(t.dir / "sys/fs/cgroup/cgroup.stat");
  auto s2 = harness::case_::read_vm_state(harness::kernel::Fs(t.dir));
  EXPECT_FALSE(s2.nr_dying_descendants);  // unread stays null, never 0
  EXPECT_TRUE(s2.to_json()["nr_dying_descendants"].is_null());
}

TEST(VmState, SettleWritesDropCachesAndCompactionAndRecordsErrno) {
  Tree t;
  harness::kernel::Fs fsx(t.dir);
  std::vector<harness::case_::StepRecord> steps;
  harness::case_::settle_vm(fsx, steps);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].step, "drop_caches 3");
  EXPECT_EQ(steps[0].err, 0);
  EXPECT_EQ(t.get("proc/sys/vm/drop_caches"), "3");
  EXPECT_EQ(t.get("proc/sys/vm/compact_memory"), "1");
  harness::kernel::FaultScope f;
  f.fail("proc/sys/vm/compact_memory", EPERM, harness::kernel::FsOp::Write);
  std::vector<harness::case_::StepRecord> steps2;
  ASSERT_NO_THROW(harness::case_::settle_vm(fsx, steps2));
  ASSERT_EQ(steps2.size(), 2u);
  EXPECT_EQ(steps2[1].err, EPERM);
}

TEST(VmState, BaselineIsPerBoot) {
  Tree t;
  harness::kernel::Fs fsx(t.dir);
  EXPECT_FALSE(harness::case_::read_vm_baseline(fsx));
  harness::case_::write_vm_baseline(fsx, {800000, "case-1", "boot-a"});
  auto b = harness::case_::read_vm_baseline(fsx);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->mem_available_kib, 800000);
  EXPECT_EQ(b->case_id, "case-1");
  t.put("proc/sys/kernel/random/boot_id", "boot-b\n");  // a rebooted VM starts a new baseline
  EXPECT_FALSE(harness::case_::read_vm_baseline(fsx));
}

TEST(VmState, MemAvailableBelowBaselineBeyondToleranceIsAnUncleanRestoration) {
  const harness::case_::VmBaseline base{800000, "case-1", "boot-a"};
  harness::case_::VmState now;
  now.mem_total_kib = 1000000;  // tolerance 10% = 100000 KiB
  now.mem_available_kib = 700000;  // exactly at the tolerance: within
  auto c = harness::case_::check_vm_baseline(now, base);
  EXPECT_TRUE(c.judged);
  EXPECT_TRUE(c.within);
  EXPECT_EQ(c.tolerance_kib, 100000);
  EXPECT_EQ(c.shortfall_kib, 100000);
  now.mem_available_kib = 699999;  // one KiB beyond
  c = harness::case_::check_vm_baseline(now, base);
  EXPECT_FALSE(c.within);
  EXPECT_NE(c.problem.find("below the VM's first-case baseline 781 MiB (case case-1; tolerance 97 MiB = 10% of MemTotal)"),
            std::string::npos)
      << c.problem;
  harness::case_::RestorationObservation obs;
  obs.vm_baseline_problem = c.problem;
  auto v = harness::case_::verify_restoration(obs);
  EXPECT_FALSE(v.clean);
  EXPECT_EQ(v.problems, std::vector<std::string>{c.problem});
  now.mem_available_kib = 900000;  // more than at baseline: fine
  EXPECT_TRUE(harness::case_::check_vm_baseline(now, base).within);
  now.mem_total_kib.reset();  // unreadable: recorded, not judged
  EXPECT_FALSE(harness::case_::check_vm_baseline(now, base).judged);
  EXPECT_TRUE(harness::case_::check_vm_baseline(now, base).within);
}
