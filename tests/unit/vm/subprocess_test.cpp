// harness::vm::run_passthrough (the one "run a program, let its output through, return its status"
// helper; the campaign runner's `vm up/reboot/down` go through it): exit status, 128+signal,
// 127 for a program that cannot be started; and harness::vm::run's capture for comparison.
#include "harness/vm/subprocess.hpp"

#include <gtest/gtest.h>

TEST(Subprocess, PassthroughReturnsTheExitStatus) {
  EXPECT_EQ(harness::vm::run_passthrough({"/bin/sh", "-c", "exit 0"}), 0);
  EXPECT_EQ(harness::vm::run_passthrough({"sh", "-c", "exit 3"}), 3);  // looked up in PATH
}

TEST(Subprocess, PassthroughReportsSignalsAndUnstartablePrograms) {
  EXPECT_EQ(harness::vm::run_passthrough({"/bin/sh", "-c", "kill -9 $$"}), 128 + 9);
  EXPECT_EQ(harness::vm::run_passthrough({"/nonexistent/program"}), 127);
  EXPECT_EQ(harness::vm::run_passthrough({}), 127);
}

TEST(Subprocess, RunCapturesWhatPassthroughLetsThrough) {
  const auto r = harness::vm::run({"/bin/sh", "-c", "echo out; echo err >&2; exit 4"});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
}
