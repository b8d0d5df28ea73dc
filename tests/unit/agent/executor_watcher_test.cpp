// The executor child and its watcher (harness/agent/cases/executor_watcher.hpp) with small shell
// executors: the exit code reaches the callback, the record is written, a phase change wakes
// waiting requests, and a cancel whose grace has passed kills the group.
#include "harness/agent/cases/executor_record.hpp"
#include "harness/agent/cases/executor_watcher.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/common/wait_until.hpp"

#include <gtest/gtest.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>

namespace {
using namespace harness::agent;
namespace fs = std::filesystem;

/// A registry with one queued case and a watcher whose callback records the exit code.
struct Bench {
  test_support::TempDir tmp{"watcher"};
  Registry reg{tmp.path()};
  std::mutex mu;
  std::condition_variable cv;
  int code = -1000;
  std::shared_ptr<CaseRec> c = std::make_shared<CaseRec>();
  ExecutorWatcher watcher{reg, [this](const std::shared_ptr<CaseRec>&, int exit_code) {
                            std::lock_guard<std::mutex> lk(mu);
                            code = exit_code;
                            cv.notify_all();
                          }};
  Bench() {
    c->id = "w";
    c->dir = reg.case_dir("w");
    fs::create_directories(c->dir / "out");
    reg.cases["w"] = c;
  }
  /// The exit code once the callback ran (-1000 when it did not within 60 s).
  int exit_code() {
    std::unique_lock<std::mutex> lk(mu);
    cv.wait_for(lk, std::chrono::seconds(60), [&] { return code != -1000; });
    return code;
  }
};

TEST(ExecutorWatcher, ExitCodeReachesTheCallbackAndTheRecordIsWritten) {
  Bench b;
  b.watcher.start(b.c, {"/bin/sh", "-c", "exit 7"});
  EXPECT_EQ(b.exit_code(), 7);
  EXPECT_EQ(b.c->state, CaseState::Finishing);
  EXPECT_EQ(b.c->child.pid, -1) << "no signal after the exit";
  const auto r = read_executor_record(b.c->dir);
  ASSERT_TRUE(r);
  EXPECT_GT(r->pid, 0);
  EXPECT_TRUE(fs::exists(b.c->dir / "executor.log"));
}

TEST(ExecutorWatcher, AnExecutorThatCannotStartThrowsNamingIt) {
  Bench b;
  EXPECT_THROW(b.watcher.start(b.c, {"/nonexistent/harness-case"}), std::runtime_error);
  EXPECT_EQ(b.c->state, CaseState::Queued);
}

TEST(ExecutorWatcher, APhaseChangeWakesWaitingRequests) {
  Bench b;
  const fs::path go = b.c->dir / "go";
  b.watcher.start(b.c, {"/bin/sh", "-c",
                        "echo warmup > " + (b.c->dir / "out" / "phase").string() + "; while [ ! -e " + go.string() +
                            " ]; do sleep 0.05; done"});
  const nlohmann::json seen = b.reg.status_when_changed(b.c, std::chrono::milliseconds(60000), "running", "setup");
  EXPECT_EQ(seen["phase"], "warmup");
  { std::ofstream(go) << "1"; }
  EXPECT_EQ(b.exit_code(), 0);
}

TEST(ExecutorWatcher, ACancelPastItsGraceKillsTheGroup) {
  Bench b;
  b.c->grace_s = 0;  // the SIGKILL deadline is the cancel itself
  // The executor ignores SIGTERM only once its trap is set: cancel after it says so (a cancel
  // that came first ended it by SIGTERM, 143, on a loaded machine).
  const fs::path ready = b.c->dir / "trap-set";
  b.watcher.start(b.c, {"/bin/sh", "-c", "trap '' TERM; : > " + ready.string() + "; while :; do sleep 1; done"});
  ASSERT_TRUE(test_support::wait_until([&] { return fs::exists(ready); }, std::chrono::seconds(60),
                                        std::chrono::milliseconds(10)))
      << "the executor never set its trap";
  b.watcher.cancel(b.c);
  EXPECT_TRUE(b.c->cancel_requested);
  EXPECT_EQ(b.exit_code(), 128 + SIGKILL);
}

}  // namespace
