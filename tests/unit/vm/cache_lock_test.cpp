// CacheLock (harness/vm/paths.hpp): a second holder waits until the first one is gone, so two
// `harness vm image` runs sharing a cache build it one after the other.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "harness/vm/paths.hpp"

namespace fs = std::filesystem;

TEST(CacheLock, SecondHolderWaitsForTheFirstProcess) {
  const fs::path dir = fs::temp_directory_path() / ("cache-lock-test-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const std::string lock = (dir / "shared" / "image.lock").string();  // parent created by the lock
  int to_child[2], from_child[2];
  ASSERT_EQ(pipe(to_child), 0);
  ASSERT_EQ(pipe(from_child), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // holds the lock until the parent writes a byte
    harness::vm::CacheLock held(lock, "the test image");
    char c = 'h';
    if (write(from_child[1], &c, 1) != 1) _exit(2);
    if (read(to_child[0], &c, 1) != 1) _exit(3);
    _exit(0);
  }
  char c = 0;
  ASSERT_EQ(read(from_child[0], &c, 1), 1);  // the child holds it now

  std::atomic<bool> acquired{false};
  std::thread waiter([&] {
    harness::vm::CacheLock mine(lock, "the test image");
    acquired = true;
  });
  // While the child holds the lock the waiter cannot have it. (A broken lock would let it
  // through at once; this can only miss a bug, never fail a working lock.)
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(acquired.load()) << "a second CacheLock was granted while another process held " << lock;
  c = 'r';
  ASSERT_EQ(write(to_child[1], &c, 1), 1);  // the child exits, the kernel drops its lock
  int st = 0;
  ASSERT_EQ(waitpid(child, &st, 0), child);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  waiter.join();
  EXPECT_TRUE(acquired.load());
  EXPECT_TRUE(fs::exists(lock));
  fs::remove_all(dir);
}

TEST(CacheLock, UnopenableLockNamesThePath) {
  try {
    harness::vm::CacheLock l("/proc/version/x.lock", "nothing");
    FAIL() << "a lock under a file was opened";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/proc/version/x.lock"), std::string::npos) << e.what();
  }
}
