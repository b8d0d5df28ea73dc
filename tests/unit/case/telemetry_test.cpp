// The telemetry sampler reads the kernel files of a real guest under bg pressure with zram
// (tests/fixtures/6.1.0-57-cloud-amd64/root, captured by tests/fixtures/capture/capture.sh).
#include <gtest/gtest.h>

#include "harness/case/run/telemetry.hpp"
#include "harness/case/run/telemetry_cpu.hpp"
#include "harness/kernel/cgroup.hpp"
#include "harness/kernel/zram.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

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
  // cpu.stat of bg and fg (the same capture): usage_usec and system_usec, us.
  EXPECT_EQ(x.bg_cpu_usage_us, 7802947);
  EXPECT_EQ(x.bg_cpu_system_us, 7680685);
  EXPECT_EQ(x.fg_cpu_usage_us, 8130860);
  EXPECT_EQ(x.fg_cpu_system_us, 133968);
  // The capture predates steal sampling (no proc/stat) and holds no /proc/<pid>: steal_us and
  // kswapd_cpu_us are NULL and named.
  EXPECT_FALSE(x.steal_us);
  EXPECT_FALSE(x.kswapd_cpu_us);
  ASSERT_TRUE(x.extra.contains("errors")) << x.extra.dump();
  EXPECT_EQ(x.extra["errors"].size(), 2u) << x.extra.dump();
  EXPECT_TRUE(x.extra["errors"].contains("proc.stat"));
  EXPECT_TRUE(x.extra["errors"].contains("proc.kswapd"));
  EXPECT_TRUE(x.extra.contains("read_duration_ns"));
  // read_ns: CLOCK_MONOTONIC right after bg memory.pressure was read (now-ish, not the tick).
  ASSERT_TRUE(x.read_ns);
  EXPECT_GT(*x.read_ns, 0);
  EXPECT_LE(*x.read_ns, harness::kernel::monotonic_ns());
}

// The reclaim CPU capture (tests/fixtures/6.1.0-57-cloud-amd64/reclaim-cpu, README there): every
// /proc/<pid>/{comm,stat} of a guest whose kswapd0 (pid 37) had reclaimed into zram for a few
// ticks, and bg and fg cpu.stat of the same moment. kswapd is found among 50 processes and kernel
// threads by its comm; its utime 0 + stime 3 ticks are 30,000 us at USER_HZ 100.
TEST(Telemetry, ReclaimCpuOfTheCapturedGuest) {
  harness::kernel::Fs fs("tests/fixtures/6.1.0-57-cloud-amd64/reclaim-cpu/root");
  EXPECT_EQ(harness::case_::kswapd_pids(fs), std::vector<int>{37});
  EXPECT_TRUE(harness::case_::kswapd_pids(harness::kernel::Fs(kRoot)).empty()) << "no /proc/<pid> in that capture";
  const std::string stat37 = fs.read("proc/37/stat"), stat1 = fs.read("proc/1/stat");
  EXPECT_EQ(harness::case_::parse_pid_cpu_ticks(stat37), 3);          // kswapd0: utime 0, stime 3
  EXPECT_EQ(harness::case_::parse_pid_cpu_ticks(stat1), 22 + 652);    // init: utime 22, stime 652
  harness::kernel::Cgroup parent(fs, "sys/fs/cgroup/harness");
  harness::case_::TelemetrySampler s(fs, parent.child("bg"), parent.child("fg"), nullptr, "", "/var/lib/harness/swapfile");
  const auto x = s.sample(9, "pressure");
  EXPECT_EQ(x.kswapd_cpu_us, 3 * 1'000'000 / ::sysconf(_SC_CLK_TCK));
  EXPECT_EQ(x.bg_cpu_usage_us, 46912596);
  EXPECT_EQ(x.bg_cpu_system_us, 46175925);
  EXPECT_EQ(x.fg_cpu_usage_us, 46996580);
  EXPECT_EQ(x.fg_cpu_system_us, 45882437);
  ASSERT_TRUE(x.extra.contains("errors"));  // the capture holds only these files
  for (const char* k : {"proc.kswapd", "bg.cpu.stat", "fg.cpu.stat"}) EXPECT_FALSE(x.extra["errors"].contains(k)) << k;
}

// /proc/<pid>/stat: the comm may hold spaces and parentheses, so fields are counted after the
// last ')'; a line cut short, or a field that is not a number, is malformed (nullopt, never 0).
TEST(Telemetry, PidStatCpuTicksAfterTheLastParenthesis) {
  using harness::case_::parse_pid_cpu_ticks;
  EXPECT_EQ(parse_pid_cpu_ticks("7 (a) (b c)) S 2 0 0 0 -1 0 0 0 0 0 11 13 0 0 20\n"), 24);
  EXPECT_FALSE(parse_pid_cpu_ticks("7 (kswapd0) S 2 0 0 0 -1 0 0 0 0 0 11"));
  EXPECT_FALSE(parse_pid_cpu_ticks("7 (kswapd0) S 2 0 0 0 -1 0 0 0 0 0 x 13 0"));
  EXPECT_FALSE(parse_pid_cpu_ticks("7 kswapd0 S 2 0 0 0 -1 0 0 0 0 0 11 13 0"));
  const auto u = harness::case_::parse_cpu_stat_usage("usage_usec 5\nuser_usec 2\nsystem_usec 3\n", "cpu.stat");
  EXPECT_EQ(u.usage_us, 5);
  EXPECT_EQ(u.system_us, 3);
  EXPECT_FALSE(harness::case_::parse_cpu_stat_usage("usage_usec 5\n", "cpu.stat").system_us) << "absent, never 0";
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
