// OpenFile (a file kept open, read with pread at offset 0) and the allocation-free parsers the
// telemetry uses every tick: pick_keyed, swap_used_kib, unescaped_equals. Each is checked
// against the full parser it stands beside on the real 6.1 capture.
#include <gtest/gtest.h>

#include <cerrno>

#include "fixture.hpp"
#include "harness/kernel/errors.hpp"
#include "harness/kernel/keyed.hpp"
#include "harness/kernel/memory_stat.hpp"
#include "harness/kernel/open_file.hpp"
#include "harness/kernel/procfs.hpp"
#include "harness/kernel/swap.hpp"
#include "harness/kernel/text.hpp"
#include "tmp_tree.hpp"

using namespace harness::kernel;

TEST(OpenFile, ReadsTheWholeFileAgainAfterItChanged) {
  kernel_test::TmpTree t;
  t.put("f", "first\n");
  OpenFile f(Fs(t.dir()), "f");
  ASSERT_TRUE(f.is_open());
  std::string buf;
  EXPECT_EQ(f.read(buf), "first\n");
  t.put("f", "second, longer\n");  // rewritten in place (same inode): the held fd sees it
  EXPECT_EQ(f.read(buf), "second, longer\n");
  EXPECT_EQ(f.path(), (t.dir() / "f").string());
}

TEST(OpenFile, AFileLargerThanTheBufferIsReadWhole) {
  kernel_test::TmpTree t;
  const std::string big(10000, 'x');
  t.put("big", big);
  OpenFile f(Fs(t.dir()), "big");
  std::string buf;
  EXPECT_EQ(f.read(buf), big);
  EXPECT_GT(buf.size(), big.size());  // grown once, kept
}

TEST(OpenFile, AMissingFileThrowsWithErrnoAndIsOpenedWhenItAppears) {
  kernel_test::TmpTree t;
  OpenFile f(Fs(t.dir()), "later");
  EXPECT_FALSE(f.is_open());
  std::string buf;
  try {
    f.read(buf);
    FAIL() << "no throw";
  } catch (const IoError& e) {
    EXPECT_EQ(e.err(), ENOENT);
    EXPECT_EQ(e.path(), (t.dir() / "later").string());
  }
  t.put("later", "here\n");
  EXPECT_EQ(f.read(buf), "here\n");
  EXPECT_TRUE(f.is_open());
}

TEST(OpenFile, AnInjectedReadFaultFailsTheReadLikeFsRead) {
  kernel_test::TmpTree t;
  t.put("sys/fs/cgroup/harness/bg/memory.stat", "pgsteal 1\n");
  FaultScope faults;
  faults.fail("harness/bg/memory.stat", EIO, FsOp::Read, 1);
  OpenFile f(Fs(t.dir()), "sys/fs/cgroup/harness/bg/memory.stat");
  std::string buf;
  try {
    f.read(buf);
    FAIL() << "no throw";
  } catch (const IoError& e) {
    EXPECT_EQ(e.err(), EIO);
  }
  EXPECT_EQ(Fs::fault_hits("harness/bg/memory.stat"), 1);
  EXPECT_EQ(f.read(buf), "pgsteal 1\n");  // times = 1: the next read goes through
}

TEST(PickKeyed, AgreesWithTheFullParserOnTheRealCapture) {
  const Fs fs(kernel_test::real_root());
  const std::string text = fs.read("sys/fs/cgroup/harness/bg/memory.stat");
  const auto all = parse_memory_stat(text, "memory.stat");
  const std::string_view keys[] = {"pgsteal", "workingset_refault_anon", "pgmajfault", "no_such_key"};
  std::optional<std::uint64_t> v[4];
  pick_keyed(text, "memory.stat", keys, v, 4);
  EXPECT_EQ(v[0], all.pgsteal());
  EXPECT_EQ(v[1], all.workingset_refault_anon());
  EXPECT_EQ(v[2], all.pgmajfault());
  EXPECT_FALSE(v[3]);  // absent: nullopt, never 0
  ASSERT_TRUE(v[0]);
  EXPECT_EQ(*v[0], 90448u);
  const std::string vm = fs.read("proc/vmstat");
  const auto vall = parse_keyed(vm, "vmstat");
  const std::string_view vk[] = {"pswpin", "pswpout"};
  std::optional<std::uint64_t> vv[2];
  pick_keyed(vm, "vmstat", vk, vv, 2);
  EXPECT_EQ(vv[0], vall.get("pswpin"));
  EXPECT_EQ(vv[1], vall.get("pswpout"));
  ASSERT_TRUE(vv[0]);
  EXPECT_EQ(*vv[0], 68042u);
}

TEST(PickKeyed, MalformedLinesAndDuplicatesOfWantedKeysThrowNamingTheLine) {
  const std::string_view keys[] = {"pgsteal"};
  std::optional<std::uint64_t> v[1];
  try {
    pick_keyed("anon 1\nfile 2 3\npgsteal 4\n", "f", keys, v, 1);  // a line of another key: still checked
    FAIL() << "no throw";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.field(), "file");
  }
  try {
    pick_keyed("pgsteal x\n", "f", keys, v, 1);
    FAIL() << "no throw";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.field(), "pgsteal");
  }
  EXPECT_THROW(pick_keyed("pgsteal 1\npgsteal 2\n", "f", keys, v, 1), ParseError);
  pick_keyed("anon x\npgsteal 5\n", "f", keys, v, 1);  // another key's value is not parsed
  EXPECT_EQ(v[0], 5u);
}

// The kernel's own form ("<key> <value>\n", split with memchr) and any other spacing (tabs,
// CR, repeated, leading or trailing spaces: split word by word) give the same values, and a
// malformed line the same error (line and key) either way.
TEST(PickKeyed, TheKernelsFormAndOtherSpacingGiveTheSameValuesAndErrors) {
  const std::string_view keys[] = {"pgsteal", "pgscan"};
  const char* const texts[] = {
      "anon 1\npgscan 7\npgsteal 5\n",          // the kernel's form
      "anon 1\npgscan\t7\npgsteal 5\n",         // a tab: the whole text word by word
      "anon 1\r\npgscan 7\r\npgsteal 5\r\n",  // CR
      "  anon 1\npgscan   7\npgsteal 5  \n\n",  // leading, repeated, trailing spaces; blank line
  };
  for (const char* text : texts) {
    SCOPED_TRACE(text);
    std::optional<std::uint64_t> v[2];
    pick_keyed(text, "f", keys, v, 2);
    EXPECT_EQ(v[0], 5u);
    EXPECT_EQ(v[1], 7u);
  }
  const char* const bad[] = {"anon 1\npgscan\npgsteal 5\n", "anon 1\npgscan 7 8\npgsteal 5\n",
                             "anon 1\npgscan 7 \t8\npgsteal 5\n", "anon 1\npgscan x\npgsteal 5\n"};
  for (const char* text : bad) {
    SCOPED_TRACE(text);
    std::optional<std::uint64_t> v[2];
    try {
      pick_keyed(text, "f", keys, v, 2);
      FAIL() << "no throw";
    } catch (const ParseError& e) {
      EXPECT_EQ(e.line(), 2);
      EXPECT_EQ(e.field(), "pgscan");
    }
  }
}

TEST(SwapUsed, AgreesWithParseSwapsAndDecodesEscapes) {
  const Fs fs(kernel_test::real_root());
  const std::string text = fs.read("proc/swaps");
  const auto rows = parse_swaps(text, "swaps");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(swap_used_kib(text, "swaps", "/dev/zram0"), rows[0].used_kib);
  EXPECT_EQ(swap_used_kib(text, "swaps", "/dev/zram0"), 103680u);
  EXPECT_FALSE(swap_used_kib(text, "swaps", "/var/lib/harness/swapfile"));  // not swapped on
  const std::string esc = "Filename Type Size Used Priority\n/my\\040swap file 100 42 -2\n";
  EXPECT_EQ(swap_used_kib(esc, "swaps", "/my swap"), 42u);
  EXPECT_FALSE(swap_used_kib(esc, "swaps", "/my\\040swap"));
  EXPECT_THROW(swap_used_kib("Filename Type\n/a file 1 2\n", "swaps", "/a"), ParseError);
  EXPECT_THROW(swap_used_kib("nope\n", "swaps", "/a"), ParseError);
}

TEST(Text, UnescapedEqualsDecodesOctalEscapesOnly) {
  EXPECT_TRUE(unescaped_equals("/a\\040b", "/a b"));
  EXPECT_TRUE(unescaped_equals("/plain", "/plain"));
  EXPECT_FALSE(unescaped_equals("/a\\040b", "/a b c"));
  EXPECT_FALSE(unescaped_equals("/a", "/ab"));
  EXPECT_TRUE(unescaped_equals("/a\\09", "/a\\09"));  // not three octal digits: kept as is
}
