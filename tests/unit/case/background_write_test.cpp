// One control-file write at a time on its own thread (harness/case/control/background_write.hpp), the
// piece the memory.reclaim and memory.high writers share: the states, one record handed back
// once, and a second start refused while one is pending. The write here waits on a promise the
// test fulfils, so every state is observed without sleeping.
#include "harness/case/control/background_write.hpp"

#include <gtest/gtest.h>

#include <future>
#include <optional>
#include <stdexcept>
#include <string>

namespace {

using harness::case_::BackgroundWrite;

TEST(BackgroundWrite, RunningThenFinishedThenHandedBackOnce) {
  BackgroundWrite<int> w;
  EXPECT_FALSE(w.running());
  EXPECT_FALSE(w.pending());
  EXPECT_FALSE(w.take().has_value());
  std::promise<void> go;
  auto released = go.get_future().share();
  std::promise<void> returned;
  auto has_returned = returned.get_future();
  w.start([released, &returned] {
    released.wait();
    returned.set_value();
    return 42;
  }, "test");
  EXPECT_TRUE(w.running());
  EXPECT_TRUE(w.pending());
  EXPECT_FALSE(w.take().has_value()) << "take() never waits for a running write";
  EXPECT_THROW(w.start([] { return 1; }, "test"), std::logic_error);
  go.set_value();
  has_returned.wait();
  const auto r = w.join();  // the thread may still be between set_value and its return
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, 42);
  EXPECT_FALSE(w.running());
  EXPECT_FALSE(w.pending());
  EXPECT_FALSE(w.join().has_value()) << "a record is handed back once";
}

TEST(BackgroundWrite, AFinishedWriteIsTakenWithoutWaitingAndTheNextMayStart) {
  BackgroundWrite<int> w;
  w.start([] { return 7; }, "test");
  std::optional<int> r;
  while (!(r = w.take())) {  // finishes at once; take() polls, as a tick does
  }
  EXPECT_EQ(*r, 7);
  EXPECT_FALSE(w.pending());
  w.start([] { return 8; }, "test");
  EXPECT_EQ(w.join().value_or(0), 8);
}

TEST(BackgroundWrite, NamesTheCallerWhenRefused) {
  BackgroundWrite<int> w;
  std::promise<void> go;
  auto released = go.get_future().share();
  w.start([released] {
    released.wait();
    return 1;
  }, "first");
  try {
    w.start([] { return 2; }, "ReclaimWriter::start");
    FAIL() << "a second write was started while one is in flight";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("ReclaimWriter::start"), std::string::npos) << e.what();
  }
  go.set_value();
  EXPECT_EQ(w.join().value_or(0), 1);
}

}  // namespace
