// memory.stat / memory.events / cgroup.events / vmstat / meminfo against the real capture
// and the edge cases: unknown keys kept, missing keys absent, malformed lines located.
#include <gtest/gtest.h>

#include "fixture.hpp"
#include "harness/kernel/cgroup.hpp"
#include "harness/kernel/errors.hpp"
#include "harness/kernel/procfs.hpp"

using namespace harness::kernel;

TEST(MemoryStat, RealBgUnderPressure) {
  Cgroup bg(Fs(kernel_test::real_root()), "sys/fs/cgroup/harness/bg");
  MemoryStat s = bg.memory_stat();
  EXPECT_EQ(s.anon_bytes(), 208973824u);
  EXPECT_EQ(s.pgsteal(), 90448u);
  EXPECT_EQ(s.pgscan(), 192592u);
  EXPECT_EQ(s.pgsteal_direct(), 90448u);
  EXPECT_EQ(s.pgscan_direct(), 192592u);
  EXPECT_EQ(s.pgsteal_kswapd(), 0u);
  EXPECT_EQ(s.workingset_refault_anon(), 64673u);
  EXPECT_EQ(s.workingset_refault_file(), 0u);
  EXPECT_EQ(s.pgfault(), 91424u);
  EXPECT_EQ(s.pgmajfault(), 64673u);
  // Keys without a typed accessor are kept.
  EXPECT_EQ(s.get("thp_fault_alloc"), 98u);
  EXPECT_EQ(s.get("sec_pagetables"), 0u);
  // 6.1 has no *_proactive counters (docs/DESIGN.md "Facts from the kernel"): absent, not zero.
  EXPECT_FALSE(s.get("pgsteal_proactive").has_value());
}

TEST(MemoryStat, AfterReclaimCaptureDiffers) {
  // bg memory.stat captured right after `echo 96M > memory.reclaim` returned 0.
  const std::string dir = std::string(HARNESS_SOURCE_DIR) + "/tests/fixtures/6.1.0-57-cloud-amd64";
  Fs fs(dir);
  MemoryStat after = parse_memory_stat(fs.read("bg-memory.stat.after-reclaim"), "after");
  MemoryStat before = Cgroup(Fs(kernel_test::real_root()), "sys/fs/cgroup/harness/bg").memory_stat();
  ASSERT_TRUE(after.pgsteal_direct() && before.pgsteal_direct());
  EXPECT_GT(*after.pgsteal_direct(), *before.pgsteal_direct());
}

TEST(MemoryStat, MissingKeysAreAbsentNotZero) {
  Cgroup bg(Fs(kernel_test::edge_root("key-missing")), "sys/fs/cgroup/harness/bg");
  MemoryStat s = bg.memory_stat();
  EXPECT_FALSE(s.pgsteal().has_value());
  EXPECT_FALSE(s.pgscan().has_value());
  EXPECT_EQ(s.pgsteal_direct(), 90448u);
  MemoryEvents e = bg.memory_events();
  EXPECT_FALSE(e.oom_group_kill().has_value());
  EXPECT_EQ(e.max(), 702u);
}

TEST(MemoryStat, MalformedLineNamesFileLineAndKey) {
  Cgroup bg(Fs(kernel_test::edge_root("malformed-line")), "sys/fs/cgroup/harness/bg");
  try {
    bg.memory_stat();
    FAIL() << "expected ParseError";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 34);
    EXPECT_EQ(e.field(), "pgsteal");
    EXPECT_NE(e.file().find("harness/bg/memory.stat"), std::string::npos);
  }
}

TEST(MemoryStat, DuplicateAndNonNumericRejected) {
  EXPECT_THROW(parse_keyed("a 1\na 2\n", "f"), ParseError);
  EXPECT_THROW(parse_keyed("a -1\n", "f"), ParseError);
  EXPECT_THROW(parse_keyed("a 99999999999999999999999\n", "f"), ParseError);
  EXPECT_EQ(parse_keyed("\na 1\n\n", "f").get("a"), 1u);
}

TEST(MemoryEvents, Real) {
  Cgroup bg(Fs(kernel_test::real_root()), "sys/fs/cgroup/harness/bg");
  MemoryEvents e = bg.memory_events();
  EXPECT_EQ(e.low(), 0u);
  EXPECT_EQ(e.high(), 0u);
  EXPECT_EQ(e.max(), 702u);
  EXPECT_EQ(e.oom(), 0u);
  EXPECT_EQ(e.oom_kill(), 0u);
  EXPECT_EQ(e.oom_group_kill(), 0u);
}

TEST(CgroupEvents, RealPopulated) {
  Cgroup bg(Fs(kernel_test::real_root()), "sys/fs/cgroup/harness/bg");
  auto ev = bg.events();
  EXPECT_EQ(ev.populated(), true);
  EXPECT_EQ(ev.frozen(), false);
}

TEST(Vmstat, Real) {
  auto v = read_vmstat(Fs(kernel_test::real_root()));
  EXPECT_EQ(v.get("nr_free_pages"), 170905u);
  EXPECT_TRUE(v.has("pswpout"));
  EXPECT_TRUE(v.has("pswpin"));
  EXPECT_GT(*v.get("pswpout"), 0u);  // captured with zram swap in use
  EXPECT_GT(v.values.size(), 100u);
}

TEST(Meminfo, RealKiBAndCounts) {
  auto m = read_meminfo(Fs(kernel_test::real_root()));
  EXPECT_EQ(m.get("MemTotal"), 995596u);
  EXPECT_EQ(m.get("MemAvailable"), 617464u);
  EXPECT_TRUE(m.has("HugePages_Total"));  // a count, no kB
  EXPECT_TRUE(m.has("SwapTotal"));
}

TEST(Meminfo, MissingKeyAbsentAndBadUnitLocated) {
  auto m = read_meminfo(Fs(kernel_test::edge_root("key-missing")));
  EXPECT_FALSE(m.get("MemAvailable").has_value());
  EXPECT_EQ(m.get("MemTotal"), 995596u);
  try {
    read_meminfo(Fs(kernel_test::edge_root("malformed-line")));
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.field(), "MemAvailable");
  }
}
