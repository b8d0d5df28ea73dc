// CpioWriter output is a gzip'd newc archive that GNU cpio lists and extracts identically.
#include "harness/vm/cpio.hpp"
#include "harness/vm/subprocess.hpp"
#include "tests/common/slurp.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace fs = std::filesystem;

TEST(Cpio, RoundTripsThroughGnuCpio) {
  // A missing tool fails (tests/README.md: a precondition is never a skip).
  ASSERT_TRUE(harness::vm::have_program("cpio")) << "cpio not installed (harness/scripts/install-deps.sh installs it)";
  fs::path d = fs::temp_directory_path() / ("cpio-test-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d / "x");
  {
    harness::vm::CpioWriter w((d / "a.cpio.gz").string());
    w.add_file("etc/harness/modules.load", "/lib/a.ko\n/lib/b.ko\n", 0644);
    w.add_file("init", "#!/bin/sh\necho hi\n", 0755);
    w.add_file("odd", std::string("abc\0def", 7), 0600);  // length not a multiple of 4
    w.add_symlink("bin/sh", "/bin/busybox");
    w.add_dir("var/lib/harness");
    EXPECT_TRUE(w.has("etc/harness"));  // parents are added automatically
    EXPECT_THROW(w.add_file("init", "again", 0755), std::runtime_error);
    w.finish();
  }
  auto list = harness::vm::run({"sh", "-c", "gzip -dc a.cpio.gz | cpio -it --quiet"}, d.string());
  ASSERT_EQ(list.exit_code, 0) << list.err;
  for (const char* p : {"etc\n", "etc/harness\n", "etc/harness/modules.load\n", "init\n", "odd\n", "bin/sh\n",
                        "var/lib/harness\n"})
    EXPECT_NE(list.out.find(p), std::string::npos) << p << " missing from:\n" << list.out;
  auto ex = harness::vm::run({"sh", "-c", "gzip -dc ../a.cpio.gz | cpio -idm --quiet"}, (d / "x").string());
  ASSERT_EQ(ex.exit_code, 0) << ex.err;
  EXPECT_EQ(test_support::slurp(d / "x" / "odd"), std::string("abc\0def", 7));
  EXPECT_EQ(fs::read_symlink(d / "x" / "bin/sh").string(), "/bin/busybox");
  EXPECT_EQ(fs::status(d / "x" / "init").permissions() & fs::perms::owner_exec, fs::perms::owner_exec);
  EXPECT_EQ(fs::status(d / "x" / "odd").permissions() & fs::perms::others_read, fs::perms::none);
  fs::remove_all(d);
}

TEST(Cpio, IdenticalInputsGiveIdenticalBytes) {
  fs::path d = fs::temp_directory_path() / ("cpio-det-" + std::to_string(getpid()));
  fs::create_directories(d);
  for (const char* n : {"1.gz", "2.gz"}) {
    harness::vm::CpioWriter w((d / n).string());
    w.add_file("a/b", "content", 0644);
    w.finish();
  }
  auto r = harness::vm::run({"cmp", (d / "1.gz").string(), (d / "2.gz").string()});
  EXPECT_EQ(r.exit_code, 0) << "content hash of the initramfs would not be stable";
  fs::remove_all(d);
}
