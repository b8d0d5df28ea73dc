#include "canaries/clock.hpp"

#include <cerrno>
#include <ctime>
#include <system_error>

namespace canaries {

std::int64_t monotonic_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::int64_t MonotonicClock::now_ns() { return monotonic_now_ns(); }

bool MonotonicClock::sleep_until_ns(std::int64_t t_ns) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(t_ns / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(t_ns % 1'000'000'000);
  const int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
  if (rc == 0) return true;
  if (rc == EINTR) return false;
  throw std::system_error(rc, std::generic_category(), "clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)");
}

}  // namespace canaries
