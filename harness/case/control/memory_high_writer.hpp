#pragma once
// bg memory.high writes for the policies that throttle instead of reclaiming (the memory-high
// policy, policies/memory_high.cpp, and the rules' memory_high action,
// rules/actions/memory_high.cpp). A memory.high below the usage makes the kernel reclaim down
// to it in the writing task (6.1 memory_high_write), so the write runs on its own thread, as
// memory.reclaim writes do (reclaim_writer.hpp); the tick only starts it and later records it.
//
// Use from the tick: busy() before deciding, start() to write, collect() every tick (the
// `memory_high_set` event once the write returned), wait() in finish(); restore_memory_high()
// writes the value read before the first set back after the schedule. A failed write is data
// (errno in the event); the case goes on.
#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

#include "harness/case/control/background_write.hpp"
#include "harness/case/run/bundle.hpp"
#include "harness/kernel/cgroup.hpp"

namespace harness::case_ {

/// "max", or the limit in bytes (the `old_memory_high` / `memory_high` fields of the events).
nlohmann::json memory_limit_json(const harness::kernel::MemoryLimit& l);

class MemoryHighWriter {
 public:
  MemoryHighWriter() = default;
  /// Waits for a write in flight (its event is then lost: call wait() first to keep it).
  ~MemoryHighWriter() = default;
  MemoryHighWriter(const MemoryHighWriter&) = delete;
  MemoryHighWriter& operator=(const MemoryHighWriter&) = delete;

  /// A write was started and its event not yet collected.
  bool busy() const { return write_.pending(); }
  /// Starts writing memory.high = `bytes` to `bg` on its own thread; std::logic_error when busy().
  void start(const harness::kernel::Cgroup& bg, std::uint64_t bytes);
  /// The `memory_high_set` event of a write that has returned (at its end time; detail: `tag`'s
  /// keys plus memory_high_bytes, start_ns, end_ns, duration_ns, errno, error), or nullopt when
  /// none has; never blocks.
  std::optional<ControllerEvent> collect(const nlohmann::json& tag);
  /// Waits for the write in flight, then collect().
  std::optional<ControllerEvent> wait(const nlohmann::json& tag);

 private:
  struct SetRecord {
    std::int64_t start_ns = 0, end_ns = 0;
    std::uint64_t bytes = 0;
    harness::kernel::WriteResult result;
  };
  static ControllerEvent event(const SetRecord& s, const nlohmann::json& tag);

  BackgroundWrite<SetRecord> write_;
};

/// Writes `old` back to bg memory.high on the calling thread (after the workloads: raising the
/// limit reclaims nothing) and returns its `memory_high_restore` event (detail: `tag`'s keys
/// plus memory_high, start_ns, errno, error).
ControllerEvent restore_memory_high(const harness::kernel::Cgroup& bg, const harness::kernel::MemoryLimit& old,
                                    const nlohmann::json& tag);

}  // namespace harness::case_
