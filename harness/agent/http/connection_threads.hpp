#pragma once
// The agent's connections each on a thread of its own, at most a set number at once (the task
// queue httplib hands accepted sockets to; guarded_server.hpp): a slow client never delays another.
#include <httplib.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>

namespace harness::agent {

/// Runs each connection on its own thread, at most `max` at once; the rest wait in order.
class ConnectionThreads final : public httplib::TaskQueue {
 public:
  explicit ConnectionThreads(std::size_t max) : max_(max) {}

  void enqueue(std::function<void()> fn) override;

  void shutdown() override;

 private:
  void run(std::function<void()> fn);

  const std::size_t max_;
  std::mutex mu_;
  std::condition_variable idle_;
  std::deque<std::function<void()>> pending_;
  std::size_t running_ = 0;
};

}  // namespace harness::agent
