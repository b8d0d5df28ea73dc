#pragma once
// Waiting on an event in a test: polls a condition until it holds or a generous deadline
// passes, and says which (the caller asserts it, so a wait that times out fails loudly with
// its own message). Never a fixed sleep standing in for the event (tests/README.md).
// Header-only; include as "tests/common/wait_until.hpp".
#include <chrono>
#include <thread>

namespace test_support {

/// Calls `done()` every `poll` until it returns true (-> true) or `limit` has passed since the
/// call (-> false, after one last check). `limit` should be generous (tens of seconds on a
/// loaded 2-core machine): it bounds a hang, it never paces the test.
template <typename F>
bool wait_until(F&& done, std::chrono::milliseconds limit, std::chrono::milliseconds poll = std::chrono::milliseconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(poll);
  }
  return done();
}

}  // namespace test_support
