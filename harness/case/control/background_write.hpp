#pragma once
// One control-file write at a time on a thread of its own, for the controller's writes that
// block: a memory.reclaim write (reclaim_writer.hpp) and a memory.high below the usage, which
// makes the kernel reclaim down to it in the writing task (memory_high_writer.hpp). Either takes
// seconds under TCG, and the tick that starts it must not wait. The write's result (a record of
// type R) is handed back once, by take() or join().
//
// States: idle -> running (start) -> finished (the write returned; running() false) -> idle
// (take()/join() handed the record back). A writer decides from running() when the next write may
// start while the record waits (reclaim), or from pending() when the record must be handed back
// first (memory.high).
#include <atomic>
#include <functional>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>

namespace harness::case_ {

template <typename R>
class BackgroundWrite {
 public:
  BackgroundWrite() = default;
  /// Waits for a write in flight (its record is then dropped: join() first to keep it).
  ~BackgroundWrite() {
    if (thread_.joinable()) thread_.join();
  }
  BackgroundWrite(const BackgroundWrite&) = delete;
  BackgroundWrite& operator=(const BackgroundWrite&) = delete;

  /// The write has not returned yet.
  bool running() const { return !done_.load(std::memory_order_acquire); }
  /// A write was started and its record not yet handed back (running or finished).
  bool pending() const { return thread_.joinable(); }

  /// Runs `write` on its own thread; std::logic_error when pending() (`who` names the caller in
  /// the message).
  void start(std::function<R()> write, const char* who) {
    if (pending()) throw std::logic_error(std::string(who) + ": a write is in flight or not yet collected");
    done_.store(false, std::memory_order_release);
    thread_ = std::thread([this, w = std::move(write)] {
      record_ = w();
      done_.store(true, std::memory_order_release);
    });
  }
  /// The record of a write that has returned (the thread joined), else nullopt; never blocks.
  std::optional<R> take() {
    if (!pending() || running()) return std::nullopt;
    return join();
  }
  /// Waits for the write, then its record; nullopt when none is pending.
  std::optional<R> join() {
    if (!pending()) return std::nullopt;
    thread_.join();
    return std::move(record_);
  }

 private:
  std::thread thread_;
  std::atomic<bool> done_{true};
  R record_{};  ///< written by the thread before done_ (release), read after join
};

}  // namespace harness::case_
