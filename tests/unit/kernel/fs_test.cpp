// harness::kernel::Fs: root joining, errno as data.
#include <gtest/gtest.h>

#include <cerrno>

#include "fixture.hpp"
#include "harness/kernel/errors.hpp"
#include "harness/kernel/fs.hpp"
#include "tmp_tree.hpp"

using namespace harness::kernel;

TEST(Fs, JoinsUnderRootAndRejectsDotDot) {
  Fs fs("/some/root");
  EXPECT_EQ(fs.path("proc/vmstat").string(), "/some/root/proc/vmstat");
  EXPECT_EQ(fs.path("/proc/vmstat").string(), "/some/root/proc/vmstat");
  EXPECT_THROW(fs.path("proc/../../etc/passwd"), std::invalid_argument);
  EXPECT_EQ(Fs().path("/proc/vmstat").string(), "/proc/vmstat");
}

TEST(Fs, ReadErrorsCarryErrno) {
  Fs fs(kernel_test::real_root());
  EXPECT_TRUE(fs.exists("proc/vmstat"));
  EXPECT_FALSE(fs.exists("proc/nonexistent"));
  auto r = fs.try_read("proc/nonexistent");
  EXPECT_EQ(r.err, ENOENT);
  try {
    fs.read("proc/nonexistent");
    FAIL();
  } catch (const IoError& e) {
    EXPECT_EQ(e.err(), ENOENT);
    EXPECT_NE(e.path().find("proc/nonexistent"), std::string::npos);
  }
  EXPECT_EQ(fs.read_line("proc/pressure/memory"), "some avg10=73.24 avg60=20.63 avg300=4.68 total=14428530");
}

TEST(Fs, WriteDoesNotCreateFiles) {
  kernel_test::TmpTree t;
  Fs fs(t.dir());
  auto w = fs.write("memory.reclaim", "1M");
  EXPECT_EQ(w.err, ENOENT);
  EXPECT_FALSE(fs.exists("memory.reclaim"));
  EXPECT_EQ(fs.mkdir("a").err, 0);
  EXPECT_EQ(fs.mkdir("a").err, EEXIST);
  EXPECT_EQ(fs.list(""), (std::vector<std::string>{"a"}));
  EXPECT_EQ(fs.rmdir("a").err, 0);
  EXPECT_THROW(fs.list("a"), IoError);
}
