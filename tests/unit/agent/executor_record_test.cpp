// The executor's record on disk (harness/agent/cases/executor_record.hpp) and whether its process
// group lives, over processes the test starts.
#include "harness/agent/cases/executor_record.hpp"
#include "harness/agent/routes/reboot.hpp"
#include "tests/common/temp_dir.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>

namespace {
using namespace harness::agent;

/// A child in a process group of its own that waits for a signal.
pid_t group_leader() {
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    for (;;) pause();
  }
  setpgid(pid, pid);
  return pid;
}

TEST(ExecutorRecord, RoundTripsThroughItsFile) {
  test_support::TempDir tmp("execrec");
  EXPECT_FALSE(read_executor_record(tmp.path()));
  const ExecutorRecord r = record_of(getpid());
  EXPECT_EQ(r.pid, getpid());
  EXPECT_EQ(r.boot_id, boot_id());
  EXPECT_GT(r.start_ticks, 0u);
  write_executor_record(tmp.path(), r);
  const auto back = read_executor_record(tmp.path());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->pid, r.pid);
  EXPECT_EQ(back->boot_id, r.boot_id);
  EXPECT_EQ(back->start_ticks, r.start_ticks);
}

TEST(ExecutorRecord, AMalformedRecordIsAnErrorNamingTheFile) {
  test_support::TempDir tmp("execrec");
  { std::ofstream(tmp / "executor.json") << R"({"pid": -3})"; }
  try {
    read_executor_record(tmp.path());
    FAIL() << "a negative pid was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(tmp / "executor.json"), std::string::npos) << e.what();
  }
}

TEST(ExecutorRecord, GroupLivesUntilItsLastMemberEnds) {
  const pid_t leader = group_leader();
  ASSERT_GT(leader, 0);
  ExecutorRecord r = record_of(leader);
  EXPECT_TRUE(group_alive(r));
  ExecutorRecord other_boot = r;
  other_boot.boot_id = "00000000-0000-0000-0000-000000000000";
  EXPECT_FALSE(group_alive(other_boot)) << "a record of another boot names no process of this one";
  ExecutorRecord other_start = r;
  other_start.start_ticks = r.start_ticks + 1;
  EXPECT_FALSE(group_alive(other_start)) << "a leader that started at another time is not the executor";
  ::kill(leader, SIGKILL);
  siginfo_t si{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(leader), &si, WEXITED | WNOWAIT), 0);  // a zombie now, not reaped
  EXPECT_FALSE(group_alive(r)) << "a zombie leader is not alive";
  ::waitpid(leader, nullptr, 0);
  EXPECT_FALSE(group_alive(r));
}

TEST(ExecutorRecord, ProcStatReadsThisProcess) {
  const auto s = proc_stat(getpid());
  ASSERT_TRUE(s);
  EXPECT_EQ(s->pgrp, getpgrp());
  EXPECT_NE(s->state, 'Z');
  EXPECT_FALSE(proc_stat(-1));
}

}  // namespace
