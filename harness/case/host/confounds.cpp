// Steal time and own CPU/RSS readings (formats: proc(5)).
#include "harness/case/host/confounds.hpp"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <sstream>

#include "harness/case/run/telemetry_cpu.hpp"
#include "harness/kernel/procfs.hpp"
#include "harness/kernel/text.hpp"

namespace harness::case_ {

long user_hz() {
  const long hz = ::sysconf(_SC_CLK_TCK);
  return hz > 0 ? hz : 100;
}

std::int64_t thread_cpu_ns() {
  struct timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::optional<std::string> read_clocksource_or_none(const harness::kernel::Fs& fs) {
  try {
    return harness::kernel::read_clocksource(fs);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<std::int64_t> parse_steal_us(std::string_view proc_stat, long hz) {
  std::string_view line, word;
  while (harness::kernel::next_line(proc_stat, line)) {
    if (!harness::kernel::next_word(line, word) || word != "cpu") continue;
    std::int64_t v = 0;
    for (int i = 1; i <= 8; ++i) {
      if (!harness::kernel::next_word(line, word)) return std::nullopt;
      const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
      if (ec != std::errc() || end != word.data() + word.size()) return std::nullopt;
    }
    return v * 1'000'000 / hz;
  }
  return std::nullopt;
}

std::optional<std::int64_t> parse_cpu_ns(std::string_view pid_stat, long hz) {
  const auto ticks = parse_pid_cpu_ticks(pid_stat);  // the one /proc/<pid>/stat CPU parser
  if (!ticks) return std::nullopt;
  return *ticks * (1'000'000'000 / hz);
}

std::optional<std::int64_t> parse_peak_rss_kib(const std::string& status) {
  std::istringstream in(status);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) != 0) continue;
    std::istringstream ls(line.substr(6));
    std::int64_t kib = 0;
    if (ls >> kib) return kib;
    return std::nullopt;
  }
  return std::nullopt;
}

SelfUsage read_usage(const harness::kernel::Fs& fs, pid_t pid) {
  const std::string dir = pid == 0 ? std::string("proc/self") : "proc/" + std::to_string(pid);
  SelfUsage u;
  auto st = fs.try_read(dir + "/stat");
  if (st.ok()) u.cpu_ns = parse_cpu_ns(st.text, user_hz());
  auto ss = fs.try_read(dir + "/status");
  if (ss.ok()) u.peak_rss_kib = parse_peak_rss_kib(ss.text);
  return u;
}

std::optional<std::int64_t> read_steal_us(const harness::kernel::Fs& fs) {
  auto r = fs.try_read("proc/stat");
  if (!r.ok()) return std::nullopt;
  return parse_steal_us(r.text, user_hz());
}

nlohmann::json StealSummary::to_json() const {
  return {{"total_us", total_us ? nlohmann::json(*total_us) : nlohmann::json()},
          {"max_per_s_us", max_per_s_us ? nlohmann::json(*max_per_s_us) : nlohmann::json()},
          {"samples", samples}};
}

StealSummary steal_summary(const std::vector<TelemetrySample>& samples) {
  const TelemetrySample* first = nullptr;
  const TelemetrySample* prev = nullptr;
  std::optional<double> max_per_s;
  int n = 0;
  for (const auto& s : samples) {
    if (!s.steal_us) continue;
    ++n;
    if (!first) first = &s;
    if (prev && s.t_ns > prev->t_ns) {
      const double per_s = static_cast<double>(*s.steal_us - *prev->steal_us) * 1e9 /
                           static_cast<double>(s.t_ns - prev->t_ns);
      max_per_s = max_per_s ? std::max(*max_per_s, per_s) : per_s;
    }
    prev = &s;
  }
  StealSummary out;
  out.samples = n;
  if (n >= 2) {
    out.total_us = *prev->steal_us - *first->steal_us;
    out.max_per_s_us = max_per_s;
  }
  return out;
}

}  // namespace harness::case_
