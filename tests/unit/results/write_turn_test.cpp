// results::Db::transaction: write transactions of one process on one database file take turns
// on a process-wide lock before SQLite's, so a second connection's writer waits on that lock
// and never polls SQLite's busy handler while the first holds the write transaction (the
// polling let a runner worker starve past the busy timeout at 50 hosts, fleet_bench). A
// connection to another file does not wait for it.
#include "results/db.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <string>
#include <thread>

namespace {

std::string fresh(const std::string& name) {
  const auto p = std::filesystem::temp_directory_path() / ("hk_write_turn_" + name + ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(p.string() + suffix);
  return p.string();
}

int count_busy(void* calls, int) {
  ++*static_cast<std::atomic<int>*>(calls);
  return 1;  // keep waiting (as the busy timeout would)
}

/// Holds a write transaction on `path`: sets `inside`, then holds it until `release` is
/// ready or `hold` has passed; `done` is set after its commit.
std::future<void> hold_write(const std::string& path, std::promise<void>& inside, std::shared_future<void> release,
                             std::chrono::milliseconds hold, std::atomic<bool>& done) {
  return std::async(std::launch::async, [&inside, &done, path, release, hold] {
    results::Db a(path, results::Db::Mode::ReadWrite);
    a.transaction([&] {
      a.exec("INSERT INTO schema_info(key, value) VALUES ('turn-a', '1')");
      inside.set_value();
      release.wait_for(hold);
    });
    done = true;
  });
}

}  // namespace

TEST(WriteTurn, ASecondConnectionWaitsForTheTurnWithoutPollingSqlite) {
  const std::string path = fresh("same");
  { results::Db init(path, results::Db::Mode::Create); }
  results::Db b(path, results::Db::Mode::ReadWrite);
  std::atomic<int> busy_calls{0};
  sqlite3_busy_handler(b.handle(), &count_busy, &busy_calls);

  std::promise<void> inside, never;
  std::atomic<bool> a_done{false};
  auto a = hold_write(path, inside, never.get_future().share(), std::chrono::milliseconds(300), a_done);
  inside.get_future().wait();
  bool a_committed_first = false;
  b.transaction([&] {
    results::Stmt seen(b, "SELECT count(*) FROM schema_info WHERE key = 'turn-a'");
    a_committed_first = seen.step() && seen.int64(0) == 1;
    b.exec("INSERT INTO schema_info(key, value) VALUES ('turn-b', '1')");
  });
  a.get();

  EXPECT_EQ(busy_calls.load(), 0) << "the second writer polled SQLite's lock instead of waiting for its turn";
  EXPECT_TRUE(a_committed_first) << "the second writer's transaction did not see the first's commit";
  results::Stmt q(b, "SELECT count(*) FROM schema_info WHERE key IN ('turn-a', 'turn-b')");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(0), 2);
  for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(path + s);
}

TEST(WriteTurn, AnotherFileIsNotHeldUp) {
  const std::string one = fresh("one"), other = fresh("other");
  { results::Db init(one, results::Db::Mode::Create); }
  results::Db b(other, results::Db::Mode::Create);
  std::promise<void> inside, b_done;
  std::atomic<bool> a_done{false};
  // The first holds its transaction until the second has committed (at most 30 s).
  auto a = hold_write(one, inside, b_done.get_future().share(), std::chrono::milliseconds(30000), a_done);
  inside.get_future().wait();
  b.transaction([&] { b.exec("INSERT INTO schema_info(key, value) VALUES ('other', '1')"); });
  const bool a_still_held = !a_done.load();
  b_done.set_value();
  a.get();
  EXPECT_TRUE(a_still_held) << "a writer of another file waited for this file's turn";
  for (const auto& p : {one, other})
    for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(p + s);
}
