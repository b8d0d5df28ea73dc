// SIGTERM/SIGINT cancellation of a case (cancel_signal.hpp).
#include "harness/case/run/cancel_signal.hpp"

#include <time.h>

#include <atomic>
#include <cerrno>

#include "harness/case/run/case_clock.hpp"

namespace harness::case_ {

namespace {
std::atomic<int> g_cancel{0};
extern "C" void on_cancel_signal(int sig) { g_cancel.store(sig); }
}  // namespace

CancelGuard::CancelGuard() {
  g_cancel.store(0);
  struct sigaction sa{};
  sa.sa_handler = on_cancel_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGTERM, &sa, &old_term_);
  ::sigaction(SIGINT, &sa, &old_int_);
}

CancelGuard::~CancelGuard() {
  ::sigaction(SIGTERM, &old_term_, nullptr);
  ::sigaction(SIGINT, &old_int_, nullptr);
}

int cancel_signal() { return g_cancel.load(); }

bool sleep_until_or_cancelled(std::int64_t t_ns) {
  struct timespec ts{static_cast<time_t>(t_ns / kSec), static_cast<long>(t_ns % kSec)};
  for (;;) {
    if (g_cancel.load()) return false;
    const int rc = ::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
    if (rc != EINTR) return !g_cancel.load();
  }
}

}  // namespace harness::case_
