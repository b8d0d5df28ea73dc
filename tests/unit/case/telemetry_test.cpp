// The telemetry sampler reads the kernel files of a real guest under bg pressure with zram
// (tests/fixtures/6.1.0-57-cloud-amd64/root, captured by tests/fixtures/capture/capture.sh).
#include <gtest/gtest.h>

#include "harness/case/telemetry.hpp"
#include "harness/kernel/cgroup.hpp"
#include "harness/kernel/zram.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace {
const char* kRoot = "tests/fixtures/6.1.0-57-cloud-amd64/root";
}

TEST(Telemetry, SamplesEveryColumnFromTheCapturedGuest) {
  harness::kernel::Fs fs(kRoot);
  harness::kernel::Cgroup parent(fs, "sys/fs/cgroup/harness");
  harness::kernel::Zram zram(fs, 0);
  harness::case_::TelemetrySampler s(fs, parent.child("bg"), parent.child("fg"), &zram, "/dev/zram0", "/var/lib/harness/swapfile");
  auto x = s.sample(42, "pressure");
  EXPECT_EQ(x.t_ns, 42);
  EXPECT_EQ(x.phase, "pressure");
  EXPECT_EQ(x.bg_some_us, 9813973);
  EXPECT_EQ(x.bg_full_us, 9813973);
  EXPECT_EQ(x.fg_some_us, 0);
  EXPECT_EQ(x.sys_some_us, 14428530);
  EXPECT_EQ(x.sys_full_us, 4586402);
  EXPECT_EQ(x.bg_current_bytes, 209657856);
  EXPECT_EQ(x.bg_swap_current_bytes, 105775104);
  EXPECT_EQ(x.bg_pgsteal, 90448);
  EXPECT_EQ(x.bg_pgscan, 192592);
  EXPECT_EQ(x.bg_workingset_refault_anon, 64673);
  EXPECT_EQ(x.bg_workingset_refault_file, 0);
  EXPECT_EQ(x.bg_pgmajfault, 64673);
  EXPECT_EQ(x.bg_oom, 0);
  EXPECT_EQ(x.bg_oom_kill, 0);
  EXPECT_TRUE(x.fg_oom_kill.has_value());
  EXPECT_EQ(x.pswpin, 68042);
  EXPECT_EQ(x.pswpout, 93969);
  EXPECT_EQ(x.zram_orig_data_bytes, 105947136);
  EXPECT_EQ(x.zram_compr_data_bytes, 1066518);
  EXPECT_EQ(x.zram_mem_used_bytes, 1761280);
  EXPECT_EQ(x.zram_swap_used_kib, 103680);  // /proc/swaps row of /dev/zram0
  EXPECT_FALSE(x.swapfile_used_kib);         // no swapfile active in that capture: NULL, not 0
  // The capture predates steal sampling (no proc/stat): steal_us is NULL and named.
  EXPECT_FALSE(x.steal_us);
  ASSERT_TRUE(x.extra.contains("errors")) << x.extra.dump();
  EXPECT_EQ(x.extra["errors"].size(), 1u) << x.extra.dump();
  EXPECT_TRUE(x.extra["errors"].contains("proc.stat"));
  EXPECT_TRUE(x.extra.contains("read_duration_ns"));
  // read_ns: CLOCK_MONOTONIC right after bg memory.pressure was read (now-ish, not the tick).
  ASSERT_TRUE(x.read_ns);
  EXPECT_GT(*x.read_ns, 0);
  EXPECT_LE(*x.read_ns, harness::kernel::monotonic_ns());
}

TEST(Telemetry, AMissingFileIsNamedAndLeftNull) {
  harness::kernel::Fs fs(kRoot);
  harness::kernel::Cgroup parent(fs, "sys/fs/cgroup/harness");
  // A cgroup that does not exist in the capture: its fields stay empty, the rest is read.
  harness::case_::TelemetrySampler s(fs, parent.child("nope"), parent.child("fg"), nullptr, "", "/var/lib/harness/swapfile");
  auto x = s.sample(1, "warmup");
  EXPECT_FALSE(x.bg_some_us);
  EXPECT_FALSE(x.read_ns);  // stamped only when bg memory.pressure was read
  EXPECT_FALSE(x.bg_current_bytes);
  EXPECT_FALSE(x.bg_pgsteal);
  EXPECT_EQ(x.fg_some_us, 0);
  EXPECT_EQ(x.sys_some_us, 14428530);
  EXPECT_FALSE(x.zram_orig_data_bytes);
  ASSERT_TRUE(x.extra.contains("errors"));
  EXPECT_TRUE(x.extra["errors"].contains("bg.memory.pressure"));
  EXPECT_TRUE(x.extra["errors"].contains("bg.memory.stat"));
  EXPECT_FALSE(x.extra["errors"].contains("fg.memory.pressure"));
}

// The OOM capture (tests/fixtures/6.1.0-57-cloud-amd64/oom, README there): the kernel killed
// processes in both cgroups, and bg oom 1 / oom_kill 4, fg oom 2 / oom_kill 6 all differ, so a
// sampler (or kernel layer) that swaps bg and fg, or oom and oom_kill, fails here.
TEST(Telemetry, OomCountersOfACapturedGuestLandInTheirOwnColumns) {
  harness::kernel::Fs fs("tests/fixtures/6.1.0-57-cloud-amd64/oom/root");
  harness::kernel::Cgroup parent(fs, "sys/fs/cgroup/harness");
  const auto bg = parent.child("bg").memory_events(), fg = parent.child("fg").memory_events();
  EXPECT_EQ(bg.oom(), 1u);
  EXPECT_EQ(bg.oom_kill(), 4u);
  EXPECT_EQ(fg.oom(), 2u);
  EXPECT_EQ(fg.oom_kill(), 6u);
  harness::case_::TelemetrySampler s(fs, parent.child("bg"), parent.child("fg"), nullptr, "", "/var/lib/harness/swapfile");
  const auto x = s.sample(7, "pressure");
  EXPECT_EQ(x.bg_oom, 1);
  EXPECT_EQ(x.bg_oom_kill, 4);
  EXPECT_EQ(x.fg_oom, 2);
  EXPECT_EQ(x.fg_oom_kill, 6);
  ASSERT_TRUE(x.extra.contains("errors")) << x.extra.dump();
  EXPECT_FALSE(x.extra["errors"].contains("bg.memory.events")) << x.extra.dump();
  EXPECT_FALSE(x.extra["errors"].contains("fg.memory.events")) << x.extra.dump();
}

// cpu.pressure and io.pressure of the captured guest (bg, fg and /proc/pressure): every
// total lands in its own column, in us, as the files say.
TEST(Telemetry, CpuAndIoPressureOfTheCapturedGuest) {
  harness::kernel::Fs fs(kRoot);
  harness::kernel::Cgroup parent(fs, "sys/fs/cgroup/harness");
  harness::kernel::Zram zram(fs, 0);
  harness::case_::TelemetrySampler s(fs, parent.child("bg"), parent.child("fg"), &zram, "/dev/zram0", "/var/lib/harness/swapfile");
  auto x = s.sample(7, "pressure");
  EXPECT_EQ(x.bg_cpu_some_us, 9600562);
  EXPECT_EQ(x.bg_cpu_full_us, 9600562);
  EXPECT_EQ(x.fg_cpu_some_us, 10908341);
  EXPECT_EQ(x.fg_cpu_full_us, 10908341);
  EXPECT_EQ(x.bg_io_some_us, 0);
  EXPECT_EQ(x.bg_io_full_us, 0);
  EXPECT_EQ(x.fg_io_some_us, 0);
  EXPECT_EQ(x.fg_io_full_us, 0);
  EXPECT_EQ(x.sys_cpu_some_us, 20464394);
  EXPECT_EQ(x.sys_cpu_full_us, 0);
  EXPECT_EQ(x.sys_io_some_us, 18081);
  EXPECT_EQ(x.sys_io_full_us, 8891);
}

// A kernel without a full line in /proc/pressure/cpu (before 5.13) and a cgroup without
// io.pressure: NULL, named, never 0. Files written here in the kernel's exact format.
TEST(Telemetry, AbsentCpuFullLineAndIoFileAreNullAndNamed) {
  const auto dir = std::filesystem::temp_directory_path() / ("tt-psi-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::copy(kRoot, dir, std::filesystem::copy_options::recursive);
  {
    std::ofstream(dir / "proc/pressure/cpu") << "some avg10=1.50 avg60=0.40 avg300=0.10 total=123456\n";
  }
  std::filesystem::remove(dir / "sys/fs/cgroup/harness/bg/io.pressure");
  harness::kernel::Fs fs(dir.string());
  harness::kernel::Cgroup parent(fs, "sys/fs/cgroup/harness");
  harness::case_::TelemetrySampler s(fs, parent.child("bg"), parent.child("fg"), nullptr, "", "/var/lib/harness/swapfile");
  auto x = s.sample(1, "pressure");
  EXPECT_EQ(x.sys_cpu_some_us, 123456);
  EXPECT_FALSE(x.sys_cpu_full_us);
  EXPECT_FALSE(x.bg_io_some_us);
  EXPECT_FALSE(x.bg_io_full_us);
  EXPECT_EQ(x.bg_cpu_some_us, 9600562);  // the other bg reads go on
  ASSERT_TRUE(x.extra.contains("errors"));
  EXPECT_TRUE(x.extra["errors"].contains("bg.io.pressure"));
  EXPECT_FALSE(x.extra["errors"].contains("proc.pressure.cpu"));
  std::filesystem::remove_all(dir);
}
