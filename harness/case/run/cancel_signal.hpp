#pragma once
// Cancelling a running case with SIGTERM or SIGINT (SPEC.md "Executor decisions", Status:
// a cancelled case is infra_failed before the pressure phase was reported and lost from
// then on, executor.hpp classify; its restoration still runs). The handler only
// stores the signal's number; the schedule's sleep wakes on it (the handlers are installed
// without SA_RESTART, so clock_nanosleep returns EINTR) and the tick loop stops there.
#include <signal.h>

#include <cstdint>

namespace harness::case_ {

/// Installs the SIGTERM/SIGINT handlers for the lifetime of one case and forgets any
/// earlier cancellation; the previous handlers are put back on destruction. One guard at a
/// time per process (the executor runs one case).
class CancelGuard {
 public:
  CancelGuard();
  ~CancelGuard();
  CancelGuard(const CancelGuard&) = delete;
  CancelGuard& operator=(const CancelGuard&) = delete;

 private:
  struct sigaction old_term_{}, old_int_{};
};

/// The signal that cancelled the case (SIGTERM 15, SIGINT 2), or 0.
int cancel_signal();

/// Sleeps until CLOCK_MONOTONIC reaches `t_ns` (absolute, ns). Returns false, at once, when
/// a cancelling signal arrived before or during the sleep.
bool sleep_until_or_cancelled(std::int64_t t_ns);

}  // namespace harness::case_
