// bg memory.high written on its own thread, and restored (memory_high_writer.hpp).
#include "harness/case/control/memory_high_writer.hpp"

#include "harness/kernel/fs.hpp"

#include <stdexcept>

namespace harness::case_ {

nlohmann::json memory_limit_json(const harness::kernel::MemoryLimit& l) {
  return l.is_max() ? nlohmann::json("max") : nlohmann::json(*l.bytes);
}

void MemoryHighWriter::start(const harness::kernel::Cgroup& bg, std::uint64_t bytes) {
  write_.start([bg, bytes] {
    SetRecord s;
    s.start_ns = harness::kernel::monotonic_ns();
    s.result = bg.set_memory_high(harness::kernel::MemoryLimit::of_bytes(bytes));
    s.end_ns = harness::kernel::monotonic_ns();
    s.bytes = bytes;
    return s;
  }, "MemoryHighWriter::start");
}

std::optional<ControllerEvent> MemoryHighWriter::collect(const nlohmann::json& tag) {
  if (auto s = write_.take()) return event(*s, tag);
  return std::nullopt;
}

std::optional<ControllerEvent> MemoryHighWriter::wait(const nlohmann::json& tag) {
  if (auto s = write_.join()) return event(*s, tag);
  return std::nullopt;
}

ControllerEvent MemoryHighWriter::event(const SetRecord& s, const nlohmann::json& tag) {
  nlohmann::json d = tag;
  d.update({{"memory_high_bytes", s.bytes},
            {"start_ns", s.start_ns},
            {"end_ns", s.end_ns},
            {"duration_ns", s.end_ns - s.start_ns},
            {"errno", s.result.err},
            {"error", s.result.ok() ? "" : s.result.message()}});
  return {s.end_ns, "memory_high_set", std::nullopt, std::nullopt, std::nullopt, std::nullopt, d};
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
