// memory.stat / memory.events / cgroup.events parsers (memory_stat.hpp).
#include "harness/kernel/memory_stat.hpp"

namespace harness::kernel {
namespace {
std::optional<bool> as_bool(const KeyedValues& kv, std::string_view key) {
  auto v = kv.get(key);
  if (!v) return std::nullopt;
  return *v != 0;
}
}  // namespace

std::optional<bool> CgroupEvents::populated() const { return as_bool(all, "populated"); }
std::optional<bool> CgroupEvents::frozen() const { return as_bool(all, "frozen"); }

MemoryStat parse_memory_stat(std::string_view text, const std::string& file) {
  return MemoryStat{parse_keyed(text, file)};
}
MemoryEvents parse_memory_events(std::string_view text, const std::string& file) {
  return MemoryEvents{parse_keyed(text, file)};
}
CgroupEvents parse_cgroup_events(std::string_view text, const std::string& file) {
  return CgroupEvents{parse_keyed(text, file)};
}

}  // namespace harness::kernel
