// Connections on threads of their own (see connection_threads.hpp).
#include "harness/agent/http/connection_threads.hpp"

#include <cstdio>
#include <memory>
#include <system_error>
#include <thread>

namespace harness::agent {

void ConnectionThreads::enqueue(std::function<void()> fn) {
  auto task = std::make_shared<std::function<void()>>(std::move(fn));
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (running_ >= max_) {
      pending_.push_back(std::move(*task));
      return;
    }
    ++running_;
  }
  try {
    std::thread([this, task] { run(std::move(*task)); }).detach();
  } catch (const std::system_error& e) {
    // No thread to be had (EAGAIN): the connection waits for a running one, or, when none
    // runs, is served here on the accept thread.
    bool inline_run = false;
    {
      std::lock_guard<std::mutex> lk(mu_);
      --running_;
      if (running_ == 0) {
        inline_run = true;
        ++running_;
      } else {
        pending_.push_back(std::move(*task));
      }
    }
    std::fprintf(stderr, "agent: cannot start a connection thread (%s)%s\n", e.what(),
                 inline_run ? ": serving it on the accept thread" : ": it waits for a free one");
    if (inline_run) run(std::move(*task));
  }
}

void ConnectionThreads::shutdown() {
  std::unique_lock<std::mutex> lk(mu_);
  idle_.wait(lk, [this] { return running_ == 0 && pending_.empty(); });
}

void ConnectionThreads::run(std::function<void()> fn) {
  for (;;) {
    fn();
    std::lock_guard<std::mutex> lk(mu_);
    if (pending_.empty()) {
      --running_;
      idle_.notify_all();
      return;
    }
    fn = std::move(pending_.front());
    pending_.pop_front();
  }
}

}  // namespace harness::agent
