// bg memory.high written on its own thread, and restored (memory_high_writer.hpp).
#include "harness/case/memory_high_writer.hpp"

#include "harness/kernel/fs.hpp"

#include <stdexcept>

namespace harness::case_ {

nlohmann::json memory_limit_json(const harness::kernel::MemoryLimit& l) {
  return l.is_max() ? nlohmann::json("max") : nlohmann::json(*l.bytes);
}

MemoryHighWriter::~MemoryHighWriter() {
  if (thread_.joinable()) thread_.join();
}

void MemoryHighWriter::start(const harness::kernel::Cgroup& bg, std::uint64_t bytes) {
  if (busy()) throw std::logic_error("MemoryHighWriter::start: a write is in flight");
  bg_.emplace(bg);
  done_.store(false, std::memory_order_release);
  thread_ = std::thread([this, bytes] {
    set_.start_ns = harness::kernel::monotonic_ns();
    set_.result = bg_->set_memory_high(harness::kernel::MemoryLimit::of_bytes(bytes));
    set_.end_ns = harness::kernel::monotonic_ns();
    set_.bytes = bytes;
    done_.store(true, std::memory_order_release);
  });
}

std::optional<ControllerEvent> MemoryHighWriter::collect(const nlohmann::json& tag) {
  if (!thread_.joinable() || !done_.load(std::memory_order_acquire)) return std::nullopt;
  return event(tag);
}

std::optional<ControllerEvent> MemoryHighWriter::wait(const nlohmann::json& tag) {
  if (!thread_.joinable()) return std::nullopt;
  return event(tag);
}

ControllerEvent MemoryHighWriter::event(const nlohmann::json& tag) {
  thread_.join();
  nlohmann::json d = tag;
  d.update({{"memory_high_bytes", set_.bytes},
            {"start_ns", set_.start_ns},
            {"end_ns", set_.end_ns},
            {"duration_ns", set_.end_ns - set_.start_ns},
            {"errno", set_.result.err},
            {"error", set_.result.ok() ? "" : set_.result.message()}});
  return {set_.end_ns, "memory_high_set", std::nullopt, std::nullopt, std::nullopt, std::nullopt, d};
}

ControllerEvent restore_memory_high(const harness::kernel::Cgroup& bg, const harness::kernel::MemoryLimit& old,
                                    const nlohmann::json& tag) {
  const std::int64_t start = harness::kernel::monotonic_ns();
  const auto r = bg.set_memory_high(old);
  nlohmann::json d = tag;
  d.update({{"memory_high", memory_limit_json(old)}, {"start_ns", start}, {"errno", r.err}, {"error", r.ok() ? "" : r.message()}});
  return {harness::kernel::monotonic_ns(), "memory_high_restore", std::nullopt, std::nullopt, std::nullopt, std::nullopt, d};
}

}  // namespace harness::case_
