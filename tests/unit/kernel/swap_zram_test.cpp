// /proc/swaps, swap header and swapfile validation; zram sysfs against the real capture
// and the unconfigured edge case.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cerrno>
#include <fstream>

#include "fixture.hpp"
#include "harness/kernel/errors.hpp"
#include "harness/kernel/swap.hpp"
#include "harness/kernel/zram.hpp"
#include "tmp_tree.hpp"

using namespace harness::kernel;

TEST(Swaps, RealZramInUse) {
  auto swaps = read_swaps(Fs(kernel_test::real_root()));
  ASSERT_EQ(swaps.size(), 1u);
  EXPECT_EQ(swaps[0].path, "/dev/zram0");
  EXPECT_EQ(swaps[0].type, "partition");
  EXPECT_EQ(swaps[0].size_kib, 524284u);
  EXPECT_EQ(swaps[0].used_kib, 103680u);
  EXPECT_EQ(swaps[0].priority, -2);
}

TEST(Swaps, HeaderOnlyIsEmptyAndEscapesDecoded) {
  EXPECT_TRUE(parse_swaps("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n", "f").empty());
  auto s = parse_swaps("Filename Type Size Used Priority\n/mnt/my\\040swap file 1024 0 5\n", "f");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].path, "/mnt/my swap");
  EXPECT_EQ(s[0].priority, 5);
  EXPECT_THROW(parse_swaps("", "f"), ParseError);
}

TEST(Swaps, MalformedLineLocated) {
  try {
    read_swaps(Fs(kernel_test::edge_root("malformed-line")));
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_NE(e.file().find("proc/swaps"), std::string::npos);
  }
}

TEST(Swapfile, ValidationFindsHolesAndMissingSignature) {
  kernel_test::TmpTree t;
  Fs fs(t.dir());
  const long page = ::sysconf(_SC_PAGESIZE);
  EXPECT_FALSE(validate_swapfile(fs, "/missing").exists);
  EXPECT_FALSE(validate_swapfile(fs, "/missing").ok());
  {  // sparse file: holes and no signature
    std::ofstream o(t.dir() / "sparse");
    o.seekp(page * 16 - 1);
    o.put('\0');
  }
  auto sparse = validate_swapfile(fs, "/sparse");
  EXPECT_TRUE(sparse.exists);
  EXPECT_FALSE(sparse.has_signature);
  EXPECT_FALSE(sparse.ok());
  {  // zero-filled (no holes)
    std::ofstream o(t.dir() / "swapfile");
    std::string zeros(static_cast<size_t>(page) * 16, '\0');
    o.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
  }
  auto before = validate_swapfile(fs, "/swapfile");
  EXPECT_FALSE(before.has_signature);
  EXPECT_GE(before.allocated_bytes, before.size_bytes);
  EXPECT_EQ(before.problems.size(), 1u);  // only the signature
  ASSERT_TRUE(mkswap(fs, "/swapfile").ok());
  auto after = validate_swapfile(fs, "/swapfile");
  EXPECT_TRUE(after.has_signature);
  EXPECT_TRUE(after.ok()) << (after.problems.empty() ? "" : after.problems[0]);
  EXPECT_EQ(mkswap(fs, "/missing").err, ENOENT);
}

TEST(Swap, SwaponRejectsBadPriorityWithoutSyscall) {
  EXPECT_EQ(swapon(Fs("/nonexistent-root"), "/swapfile", -5).err, EINVAL);
  EXPECT_EQ(swapon(Fs("/nonexistent-root"), "/swapfile", 40000).err, EINVAL);
}

TEST(Zram, RealConfiguredDevice) {
  Fs fs(kernel_test::real_root());
  EXPECT_EQ(list_zram_devices(fs), (std::vector<int>{0, 1}));
  EXPECT_TRUE(zram_control_present(fs));
  Zram z(fs, 0);
  EXPECT_TRUE(z.exists());
  EXPECT_EQ(z.dev_path(), "/dev/zram0");
  EXPECT_TRUE(z.initialized());
  EXPECT_EQ(z.disksize_bytes(), 536870912u);
  auto a = z.comp_algorithm();
  EXPECT_EQ(a.selected, "lzo-rle");
  EXPECT_EQ(a.available, (std::vector<std::string>{"lzo", "lzo-rle", "lz4", "lz4hc", "zstd"}));
  auto m = z.mm_stat();
  EXPECT_EQ(m.orig_data_size_bytes, 105947136u);
  EXPECT_EQ(m.compr_data_size_bytes, 1066518u);
  EXPECT_EQ(m.mem_used_total_bytes, 1761280u);
  EXPECT_EQ(m.mem_limit_bytes, 0u);
  EXPECT_EQ(m.mem_used_max_bytes, 1773568u);
  EXPECT_EQ(m.huge_pages, 0u);
  EXPECT_EQ(m.huge_pages_since, 0u);  // 6.1 prints 9 columns
}

TEST(Zram, UnconfiguredDevice) {
  Fs fs(kernel_test::edge_root("zram-unconfigured"));
  Zram z(fs, 0);
  EXPECT_FALSE(z.initialized());
  EXPECT_EQ(z.disksize_bytes(), 0u);
  EXPECT_EQ(z.mm_stat().orig_data_size_bytes, 0u);
  EXPECT_EQ(z.comp_algorithm().selected, "lzo-rle");
  // hot_add returns the new device id (what the guest returned: 1).
  EXPECT_EQ(Zram::hot_add(fs).id(), 1);
  EXPECT_FALSE(Zram(fs, 1).exists());
}

TEST(Zram, TruncatedMmStatNamesMissingColumn) {
  Zram z(Fs(kernel_test::edge_root("malformed-line")), 0);
  try {
    z.mm_stat();
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_EQ(e.field(), "same_pages");
  }
  EXPECT_FALSE(parse_zram_mm_stat("1 2 3 4 5 6 7\n", "f").huge_pages.has_value());
}

TEST(Zram, WritesOnScratchCopy) {
  kernel_test::TmpTree t;
  for (const char* f : {"disksize", "comp_algorithm", "reset"}) t.put(std::string("sys/block/zram0/") + f, "");
  t.put("sys/class/zram-control/hot_remove", "");
  Zram z(Fs(t.dir()), 0);
  EXPECT_TRUE(z.set_comp_algorithm("zstd").ok());
  EXPECT_EQ(t.get("sys/block/zram0/comp_algorithm"), "zstd");
  EXPECT_TRUE(z.set_disksize(512ull << 20).ok());
  EXPECT_EQ(t.get("sys/block/zram0/disksize"), "512M");
  EXPECT_TRUE(z.reset().ok());
  EXPECT_EQ(t.get("sys/block/zram0/reset"), "1");
  EXPECT_TRUE(z.hot_remove().ok());
  EXPECT_EQ(t.get("sys/class/zram-control/hot_remove"), "0");
  EXPECT_EQ(Zram(Fs(t.dir()), 7).reset().err, ENOENT);
}
