// Sizes, bracket choices, procfs scalars, cgroup topology, kernel config.
#include <gtest/gtest.h>

#include "fixture.hpp"
#include "harness/kernel/errors.hpp"
#include "harness/kernel/kconfig.hpp"
#include "harness/kernel/procfs.hpp"
#include "harness/kernel/size.hpp"
#include "harness/kernel/topology.hpp"
#include "tmp_tree.hpp"

using namespace harness::kernel;

TEST(Size, SuffixFormatting) {
  EXPECT_EQ(format_size_suffix(96ull << 20), "96M");
  EXPECT_EQ(format_size_suffix(16ull << 20), "16M");
  EXPECT_EQ(format_size_suffix(1ull << 30), "1G");
  EXPECT_EQ(format_size_suffix(1536ull << 10), "1536K");
  EXPECT_EQ(format_size_suffix(1000), "1000");
  EXPECT_EQ(format_size_suffix(0), "0");
}

TEST(Size, HumanParsing) {
  EXPECT_EQ(parse_human_size("96M", "x"), 96ull << 20);
  EXPECT_EQ(parse_human_size("96MiB", "x"), 96ull << 20);
  EXPECT_EQ(parse_human_size("2g", "x"), 2ull << 30);
  EXPECT_EQ(parse_human_size("4096", "x"), 4096u);
  EXPECT_THROW(parse_human_size("", "x"), std::invalid_argument);
  EXPECT_THROW(parse_human_size("12Q", "x"), std::invalid_argument);
  EXPECT_THROW(parse_human_size("M", "x"), std::invalid_argument);
  try {
    parse_human_size("5X", "--min-free-disk");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--min-free-disk"), std::string::npos);
  }
}

TEST(Size, Limits) {
  EXPECT_TRUE(parse_limit("max\n", "f", "memory.max").is_max());
  EXPECT_EQ(parse_limit("209715200\n", "f", "memory.max").bytes, 209715200u);
  EXPECT_THROW(parse_limit("lots", "f", "memory.max"), ParseError);
  EXPECT_EQ(format_limit(MemoryLimit::unlimited()), "max");
}

TEST(Procfs, RealScalars) {
  Fs fs(kernel_test::real_root());
  EXPECT_EQ(kernel_release(fs), "6.1.0-57-cloud-amd64");  // from proc/version (no osrelease captured)
  EXPECT_EQ(kernel_cmdline(fs), "console=ttyS0 quiet panic=-1");
  auto thp = read_thp_enabled(fs);
  EXPECT_EQ(thp.selected, "always");
  EXPECT_EQ(thp.available.size(), 3u);
  EXPECT_EQ(read_swappiness(fs), 60);
  EXPECT_EQ(read_clocksource(fs), "tsc");
  EXPECT_EQ(read_mglru_enabled(fs), "0x0000");
  EXPECT_EQ(read_online_cpus(fs), 1u);  // from proc/cpuinfo
  EXPECT_FALSE(read_mglru_enabled(Fs(kernel_test::edge_root("psi-absent"))).has_value());
}

TEST(Procfs, CpuListAndChoices) {
  EXPECT_EQ(parse_cpu_list_count("0\n", "f"), 1u);
  EXPECT_EQ(parse_cpu_list_count("0-1\n", "f"), 2u);
  EXPECT_EQ(parse_cpu_list_count("0,2-3,7", "f"), 4u);
  EXPECT_THROW(parse_cpu_list_count("3-1", "f"), ParseError);
  EXPECT_THROW(parse_cpu_list_count("", "f"), ParseError);
  EXPECT_THROW(parse_bracket_choice("[a] [b]", "f"), ParseError);
  EXPECT_EQ(parse_bracket_choice("a b", "f").selected, "");
}

TEST(Procfs, OomScoreAdjWriteAndRead) {
  kernel_test::TmpTree t;
  t.put("proc/self/oom_score_adj", "0\n");
  t.put("proc/77/oom_score_adj", "-1000\n");
  Fs fs(t.dir());
  EXPECT_EQ(read_oom_score_adj(fs), 0);
  EXPECT_EQ(read_oom_score_adj(fs, 77), -1000);
  EXPECT_TRUE(write_oom_score_adj(fs, -1000).ok());
  EXPECT_EQ(t.get("proc/self/oom_score_adj"), "-1000");
}

TEST(Topology, RealGuestCgroup2Only) {
  Fs fs(kernel_test::real_root());
  auto p = locate_controller(fs, "memory");
  EXPECT_TRUE(p.compiled_in);
  EXPECT_TRUE(p.enabled);
  EXPECT_EQ(p.v1_hierarchy, 0);
  EXPECT_EQ(p.cgroup2_mount, "/sys/fs/cgroup");  // fallback: no proc/self/mounts captured
  EXPECT_TRUE(p.in_cgroup2_root);
  EXPECT_TRUE(p.enabled_for_children);
}

TEST(Topology, DevHostMemoryOnCgroupV1) {
  Fs fs(std::string(HARNESS_SOURCE_DIR) + "/tests/fixtures/host-cgroup-v1-6.18/root");
  auto p = locate_controller(fs, "memory");
  EXPECT_EQ(p.v1_hierarchy, 4);
  EXPECT_EQ(p.v1_mountpoint, "/sys/fs/cgroup/memory");
  EXPECT_EQ(p.cgroup2_mount, "/sys/fs/cgroup/unified");
  EXPECT_FALSE(p.in_cgroup2_root);
  EXPECT_FALSE(p.enabled_for_children);
  auto h = locate_controller(fs, "hugetlb");
  EXPECT_EQ(h.v1_hierarchy, 0);
  EXPECT_TRUE(h.in_cgroup2_root);
}

TEST(Topology, MountsAndCgroupsParsing) {
  auto m = parse_mounts("cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n/dev/a /mnt/x\\040y ext4 rw 0 0\n", "f");
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[1].mountpoint, "/mnt/x y");
  EXPECT_EQ(m[0].options, (std::vector<std::string>{"rw", "nosuid"}));
  EXPECT_THROW(parse_mounts("onlytwo fields\n", "f"), ParseError);
  EXPECT_THROW(parse_proc_cgroups("#h\nmemory 0 x 1\n", "f"), ParseError);
}

TEST(KernelConfig, DebianCloudConfig) {
  // The config of the kernel the fixtures were captured on (shipped in its package).
  const std::string text =
      "# comment\nCONFIG_PSI=y\n# CONFIG_PSI_DEFAULT_DISABLED is not set\nCONFIG_ZRAM=m\n"
      "CONFIG_ZRAM_DEF_COMP=\"lzo-rle\"\nCONFIG_NR_CPUS=8192\n";
  auto c = parse_kernel_config(text, "config");
  EXPECT_TRUE(c.enabled("CONFIG_PSI"));
  EXPECT_TRUE(c.enabled("CONFIG_ZRAM"));
  EXPECT_EQ(c.get("CONFIG_PSI_DEFAULT_DISABLED"), "n");
  EXPECT_FALSE(c.enabled("CONFIG_PSI_DEFAULT_DISABLED"));
  EXPECT_EQ(c.get("CONFIG_ZRAM_DEF_COMP"), "\"lzo-rle\"");
  EXPECT_FALSE(c.get("CONFIG_NOPE").has_value());
  EXPECT_THROW(parse_kernel_config("CONFIG_X\n", "config"), ParseError);
}

TEST(KernelConfig, ReadsBootConfigUnderRoot) {
  kernel_test::TmpTree t;
  t.put("boot/config-6.1.0-57-cloud-amd64", "CONFIG_PSI=y\n");
  auto c = read_kernel_config(Fs(t.dir()), "6.1.0-57-cloud-amd64");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->source, "/boot/config-6.1.0-57-cloud-amd64");
  EXPECT_FALSE(read_kernel_config(Fs(t.dir()), "other").has_value());
}
