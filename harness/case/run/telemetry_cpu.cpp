// Reclaim CPU readings of the telemetry (see telemetry_cpu.hpp; formats: proc(5), cgroup v2 cpu.stat).
#include "harness/case/run/telemetry_cpu.hpp"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <string>

#include "harness/kernel/errors.hpp"
#include "harness/kernel/keyed.hpp"
#include "harness/kernel/text.hpp"

namespace harness::case_ {

std::optional<std::int64_t> parse_pid_cpu_ticks(std::string_view stat) {
  // Fields after the last ')' start with field 3 (state).
  const auto close = stat.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view rest = stat.substr(close + 1), word;
  std::int64_t utime = 0, stime = 0;
  for (int field = 3; field <= 15; ++field) {
    if (!harness::kernel::next_word(rest, word)) return std::nullopt;
    if (field < 14) continue;
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
    if (ec != std::errc() || end != word.data() + word.size()) return std::nullopt;
    (field == 14 ? utime : stime) = v;
  }
  return utime + stime;
}

std::vector<int> kswapd_pids(const harness::kernel::Fs& fs) {
  std::vector<int> out;
  for (const auto& name : fs.list("proc")) {
    int pid = 0;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (name.empty() || ec != std::errc() || end != name.data() + name.size()) continue;
    const auto comm = fs.try_read("proc/" + name + "/comm");
    if (!comm.ok()) continue;  // gone since the listing: not a kswapd thread, which lives as long as the kernel
    const std::string_view c = harness::kernel::trim(comm.text);
    if (c.size() > 6 && c.substr(0, 6) == "kswapd" && c.find_first_not_of("0123456789", 6) == std::string_view::npos)
      out.push_back(pid);
  }
  std::sort(out.begin(), out.end());
  return out;
}

CpuStatUsage parse_cpu_stat_usage(std::string_view text, const std::string& file) {
  static constexpr std::string_view kKeys[] = {"usage_usec", "system_usec"};
  std::optional<std::uint64_t> v[std::size(kKeys)];
  harness::kernel::pick_keyed(text, file, kKeys, v, std::size(kKeys));
  CpuStatUsage u;
  if (v[0]) u.usage_us = static_cast<std::int64_t>(*v[0]);
  if (v[1]) u.system_us = static_cast<std::int64_t>(*v[1]);
  return u;
}

}  // namespace harness::case_
