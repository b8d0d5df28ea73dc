// Process placement: a child that cannot be placed into its cgroup never runs its program
// (it is killed and reaped before exec), and the error names the cgroup.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cerrno>
#include <filesystem>

#include "harness/case/host/process.hpp"

TEST(Process, PlacementFailureKillsAndReapsTheChild) {
  auto root = std::filesystem::temp_directory_path() / ("hk_case_proc_" + std::to_string(::getpid()));
  std::filesystem::create_directories(root);
  auto marker = root / "ran";
  harness::kernel::Fs fs(root);
  harness::kernel::Cgroup missing(fs, "sys/fs/cgroup/harness/bg");  // no cgroup.procs there
  try {
    harness::case_::spawn_in_cgroup(missing, {{"/bin/sh", "-c", "touch " + marker.string()}, "", ""});
    FAIL() << "spawn succeeded without a cgroup";
  } catch (const harness::case_::SpawnError& e) {
    EXPECT_NE(std::string(e.what()).find("sys/fs/cgroup/harness/bg"), std::string::npos) << e.what();
  }
  int st;
  EXPECT_EQ(::waitpid(-1, &st, WNOHANG), -1);  // nothing left to reap
  EXPECT_EQ(errno, ECHILD);
  EXPECT_FALSE(std::filesystem::exists(marker));  // the program never ran
  std::filesystem::remove_all(root);
}

TEST(Process, WaitForExitDecodesStatus) {
  pid_t p = ::fork();
  if (p == 0) ::_exit(7);
  auto x = harness::case_::wait_for_exit(p, 10'000'000'000);
  ASSERT_TRUE(x);
  EXPECT_TRUE(x->exited);
  EXPECT_EQ(x->exit_code, 7);
  pid_t q = ::fork();
  if (q == 0) {
    ::pause();
    ::_exit(0);
  }
  EXPECT_FALSE(harness::case_::wait_for_exit(q, 0));  // still running: timeout, not an error
  ::kill(q, SIGKILL);
  auto y = harness::case_::wait_for_exit(q, 10'000'000'000);
  ASSERT_TRUE(y);
  EXPECT_FALSE(y->exited);
  EXPECT_EQ(y->signal, SIGKILL);
  EXPECT_FALSE(harness::case_::process_alive(q));
}
