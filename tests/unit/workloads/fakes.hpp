#pragma once
// Test doubles for the workloads: a scripted clock and a scripted usage source.
#include "canaries/clock.hpp"
#include "canaries/thread_usage.hpp"

#include <cstdint>
#include <vector>

namespace workloads_test {

/// Fake CLOCK_MONOTONIC: time moves only when the test (or a sleep) moves it.
/// A sleep that has to wait lands at target + wake_latency_ns; a sleep whose target
/// is past returns at once. `step_per_read_ns` advances time on every now_ns() call.
struct FakeClock : canaries::Clock {
  std::int64_t t = 0;
  std::int64_t wake_latency_ns = 0;
  std::int64_t step_per_read_ns = 0;
  int eintr_remaining = 0;  ///< the next N sleeps report EINTR without advancing
  std::vector<std::int64_t> sleep_targets;
  std::int64_t now_ns() override {
    const std::int64_t v = t;
    t += step_per_read_ns;
    return v;
  }
  bool sleep_until_ns(std::int64_t target) override {
    sleep_targets.push_back(target);
    if (eintr_remaining > 0) {
      --eintr_remaining;
      return false;
    }
    if (t < target) t = target + wake_latency_ns;
    return true;
  }
};

/// Usage counters the test bumps from inside a request.
struct FakeUsage : canaries::UsageSource {
  canaries::UsageSample cur;
  canaries::UsageSample sample() override { return cur; }
};

}  // namespace workloads_test
