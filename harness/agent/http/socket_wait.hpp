#pragma once
// Bounded waits on a connection's socket: every wait of the transport ends at its deadline or
// within a second of the server's stop (guarded_server.hpp).
#include <httplib.h>

#include <atomic>
#include <chrono>

namespace harness::agent {

using Clock = std::chrono::steady_clock;

/// Milliseconds from now until `t`, 0 when it has passed (at most 2^30).
int ms_until(Clock::time_point t);

/// How a wait on a socket ended.
enum class Wait { Ready, Timeout, Stopped, Failed };

/// Waits for `events` on `fd` until `until`, in slices of at most 1 s so that a server stop
/// (the listening socket closed) ends the wait within a second. Each slice is a wake of the
/// connection's thread, and a kept-alive connection of a runner polling once a second waits
/// here for the whole case: in the guest every wake is CPU charged to the case (200 ms
/// slices were 5 wakes a second).
Wait wait_fd(int fd, short events, Clock::time_point until, const std::atomic<socket_t>& listening);

}  // namespace harness::agent
