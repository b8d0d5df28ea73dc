// Bounded waits on a connection's socket (see socket_wait.hpp).
#include "harness/agent/http/socket_wait.hpp"

#include <poll.h>

#include <algorithm>
#include <cerrno>

namespace harness::agent {

int ms_until(Clock::time_point t) {
  const auto d = std::chrono::duration_cast<std::chrono::milliseconds>(t - Clock::now()).count();
  return d <= 0 ? 0 : static_cast<int>(std::min<long long>(d, 1 << 30));
}

Wait wait_fd(int fd, short events, Clock::time_point until, const std::atomic<socket_t>& listening) {
  for (;;) {
    if (listening == INVALID_SOCKET) return Wait::Stopped;
    const int left = ms_until(until);
    if (left == 0) return Wait::Timeout;
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, std::min(left, 1000));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Wait::Failed;
    if (r > 0) return Wait::Ready;  // readable, writable, or hung up: the next call says which
  }
}

}  // namespace harness::agent
