// Cgroup reads against the real capture; writes (format and errno-as-data) on a scratch
// copy, since a fixture tree holds regular files, not kernel files.
#include <gtest/gtest.h>

#include <cerrno>

#include "fixture.hpp"
#include "harness/kernel/cgroup.hpp"
#include "harness/kernel/errors.hpp"
#include "tmp_tree.hpp"

using namespace harness::kernel;

TEST(Cgroup, RealReads) {
  Fs fs(kernel_test::real_root());
  Cgroup root = Cgroup::root(fs);
  EXPECT_EQ(root.controllers(), (std::vector<std::string>{"cpuset", "cpu", "io", "memory", "hugetlb", "pids", "rdma", "misc"}));
  EXPECT_EQ(root.subtree_control(), (std::vector<std::string>{"cpu", "io", "memory"}));
  Cgroup bg = root.child("harness").child("bg");
  EXPECT_TRUE(bg.exists());
  EXPECT_EQ(bg.dir(), "sys/fs/cgroup/harness/bg");
  EXPECT_EQ(bg.memory_max(), MemoryLimit::of_bytes(209715200));  // 200M
  EXPECT_TRUE(bg.memory_high().is_max());
  EXPECT_TRUE(bg.memory_swap_max().is_max());
  EXPECT_EQ(bg.memory_low_bytes(), 0u);
  EXPECT_EQ(bg.memory_min_bytes(), 0u);
  EXPECT_EQ(bg.memory_current_bytes(), 209657856u);
  EXPECT_EQ(bg.memory_swap_current_bytes(), 105775104u);
  EXPECT_EQ(bg.procs(), (std::vector<pid_t>{113}));
  Cgroup fg = root.child("harness").child("fg");
  EXPECT_EQ(fg.procs(), (std::vector<pid_t>{114}));
  EXPECT_FALSE(root.child("nonexistent").exists());
  EXPECT_THROW(root.child("nonexistent").memory_current_bytes(), IoError);
}

TEST(Cgroup, ChildNameValidated) {
  Cgroup root = Cgroup::root(Fs(kernel_test::real_root()));
  EXPECT_THROW(root.child(".."), std::invalid_argument);
  EXPECT_THROW(root.child("a/b"), std::invalid_argument);
  EXPECT_THROW(root.child(""), std::invalid_argument);
}

TEST(Cgroup, WritesUseKernelFormats) {
  kernel_test::TmpTree t;
  for (const char* f : {"cgroup.subtree_control", "cgroup.procs", "cgroup.kill", "memory.max", "memory.high",
                        "memory.low", "memory.min", "memory.swap.max", "memory.oom.group", "memory.reclaim"})
    t.put(std::string("sys/fs/cgroup/bg/") + f, "");
  Cgroup bg(Fs(t.dir()), "/sys/fs/cgroup/bg/");
  EXPECT_TRUE(bg.enable_controllers({"memory", "cpu", "io"}).ok());
  EXPECT_EQ(t.get("sys/fs/cgroup/bg/cgroup.subtree_control"), "+memory +cpu +io");
  EXPECT_TRUE(bg.move_pid(4242).ok());
  EXPECT_EQ(t.get("sys/fs/cgroup/bg/cgroup.procs"), "4242");
  EXPECT_TRUE(bg.set_memory_max(MemoryLimit::of_bytes(200ull << 20)).ok());
  EXPECT_EQ(t.get("sys/fs/cgroup/bg/memory.max"), "209715200");
  EXPECT_TRUE(bg.set_memory_high(MemoryLimit::unlimited()).ok());
  EXPECT_EQ(t.get("sys/fs/cgroup/bg/memory.high"), "max");
  EXPECT_TRUE(bg.set_memory_low(4096).ok());
  EXPECT_EQ(t.get("sys/fs/cgroup/bg/memory.low"), "4096");
  EXPECT_TRUE(bg.set_memory_min(8192).ok());
  EXPECT_EQ(t.get("sys/fs/cgroup/bg/memory.min"), "8192");
  EXPECT_TRUE(bg.set_memory_swap_max(MemoryLimit::unlimited()).ok());
  EXPECT_EQ(t.get("sys/fs/cgroup/bg/memory.swap.max"), "max");
  EXPECT_TRUE(bg.set_memory_oom_group(true).ok());
  EXPECT_EQ(t.get("sys/fs/cgroup/bg/memory.oom.group"), "1");
  EXPECT_TRUE(bg.kill().ok());
  EXPECT_EQ(t.get("sys/fs/cgroup/bg/cgroup.kill"), "1");
}

TEST(Cgroup, ReclaimWritesSizeWithUnitAndTimes) {
  kernel_test::TmpTree t;
  t.put("sys/fs/cgroup/bg/memory.reclaim", "");
  Cgroup bg(Fs(t.dir()), "sys/fs/cgroup/bg");
  ReclaimResult r = bg.reclaim(96ull << 20);
  EXPECT_TRUE(r.write.ok()) << r.write.message();
  EXPECT_EQ(r.request_bytes, 100663296u);
  EXPECT_EQ(r.written, "96M");
  EXPECT_EQ(t.get("sys/fs/cgroup/bg/memory.reclaim"), "96M");
  EXPECT_GT(r.start_ns, 0);
  EXPECT_GE(r.end_ns, r.start_ns);
  EXPECT_EQ(r.duration_ns(), r.end_ns - r.start_ns);
}

TEST(Cgroup, FailedWritesAreDataNotExceptions) {
  kernel_test::TmpTree t;
  Cgroup gone(Fs(t.dir()), "sys/fs/cgroup/gone");
  ReclaimResult r = gone.reclaim(1 << 20);
  EXPECT_EQ(r.write.err, ENOENT);
  EXPECT_FALSE(r.write.ok());
  EXPECT_NE(r.write.message().find("memory.reclaim"), std::string::npos);
  EXPECT_EQ(gone.enable_controllers({"memory"}).err, ENOENT);
  EXPECT_EQ(gone.kill().err, ENOENT);
}

TEST(Cgroup, CreateAndRemove) {
  kernel_test::TmpTree t;
  t.put("sys/fs/cgroup/cgroup.controllers", "memory\n");
  Cgroup c = Cgroup::root(Fs(t.dir())).child("harness-x");
  EXPECT_FALSE(c.exists());
  EXPECT_TRUE(c.create().ok());
  EXPECT_TRUE(c.exists());
  EXPECT_EQ(c.create().err, EEXIST);
  EXPECT_TRUE(c.remove().ok());
  EXPECT_FALSE(c.exists());
  EXPECT_EQ(c.remove().err, ENOENT);
}

TEST(Cgroup, PidListParsing) {
  EXPECT_EQ(parse_pid_list("1\n22\n333\n", "f"), (std::vector<pid_t>{1, 22, 333}));
  EXPECT_TRUE(parse_pid_list("", "f").empty());
  EXPECT_THROW(parse_pid_list("12\nabc\n", "f"), ParseError);
  EXPECT_THROW(parse_pid_list("0\n", "f"), ParseError);
}
