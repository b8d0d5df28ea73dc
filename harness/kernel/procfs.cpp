// System-wide /proc and /sys values (procfs.hpp).
#include "harness/kernel/procfs.hpp"

#include <charconv>

#include "harness/kernel/errors.hpp"
#include "harness/kernel/text.hpp"

namespace harness::kernel {

KeyedValues read_vmstat(const Fs& fs) { return parse_keyed(fs.read("proc/vmstat"), fs.path("proc/vmstat").string()); }
KeyedValues read_meminfo(const Fs& fs) {
  return parse_meminfo(fs.read("proc/meminfo"), fs.path("proc/meminfo").string());
}

namespace {
std::string pid_dir(pid_t pid) { return pid == 0 ? std::string("proc/self") : "proc/" + std::to_string(pid); }
int parse_int(std::string_view s, const std::string& file, const std::string& field) {
  auto t = trim(s);
  int v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || p != t.data() + t.size())
    throw ParseError(file, 1, field, "expected an integer, got '" + std::string(t) + "'");
  return v;
}
}  // namespace

WriteResult write_oom_score_adj(const Fs& fs, int value, pid_t pid) {
  return fs.write(pid_dir(pid) + "/oom_score_adj", std::to_string(value));
}

int read_oom_score_adj(const Fs& fs, pid_t pid) {
  const auto f = pid_dir(pid) + "/oom_score_adj";
  return parse_int(fs.read(f), fs.path(f).string(), "oom_score_adj");
}

std::string kernel_release(const Fs& fs) {
  if (auto r = fs.try_read("proc/sys/kernel/osrelease"); r.ok()) return std::string(trim(r.text));
  const auto text = fs.read("proc/version");
  auto w = split_ws(text);
  if (w.size() < 3 || w[0] != "Linux" || w[1] != "version")
    throw ParseError(fs.path("proc/version").string(), 1, "release", "expected 'Linux version <release> ...'");
  return std::string(w[2]);
}
std::string kernel_cmdline(const Fs& fs) { return std::string(trim(fs.read("proc/cmdline"))); }

BracketChoice parse_bracket_choice(std::string_view text, const std::string& file) {
  BracketChoice c;
  for (auto w : split_ws(text)) {
    if (w.size() >= 2 && w.front() == '[' && w.back() == ']') {
      if (!c.selected.empty()) throw ParseError(file, 1, std::string(w), "more than one bracketed choice");
      w = w.substr(1, w.size() - 2);
      c.selected = std::string(w);
    }
    c.available.emplace_back(w);
  }
  return c;
}

BracketChoice read_thp_enabled(const Fs& fs) {
  const char* f = "sys/kernel/mm/transparent_hugepage/enabled";
  return parse_bracket_choice(fs.read(f), fs.path(f).string());
}

int read_swappiness(const Fs& fs) {
  const char* f = "proc/sys/vm/swappiness";
  return parse_int(fs.read(f), fs.path(f).string(), "swappiness");
}

std::string read_clocksource(const Fs& fs) {
  return std::string(trim(fs.read("sys/devices/system/clocksource/clocksource0/current_clocksource")));
}

std::optional<std::string> read_mglru_enabled(const Fs& fs) {
  auto r = fs.try_read("sys/kernel/mm/lru_gen/enabled");
  if (!r.ok()) return std::nullopt;
  return std::string(trim(r.text));
}

unsigned parse_cpu_list_count(std::string_view text, const std::string& file) {
  unsigned count = 0;
  auto t = trim(text);
  if (t.empty()) throw ParseError(file, 1, "cpus", "empty CPU list");
  size_t pos = 0;
  while (pos <= t.size()) {
    size_t comma = t.find(',', pos);
    if (comma == std::string_view::npos) comma = t.size();
    auto item = t.substr(pos, comma - pos);
    auto dash = item.find('-');
    if (dash == std::string_view::npos) {
      parse_u64(item, file, 1, "cpus");
      count += 1;
    } else {
      auto a = parse_u64(item.substr(0, dash), file, 1, "cpus");
      auto b = parse_u64(item.substr(dash + 1), file, 1, "cpus");
      if (b < a) throw ParseError(file, 1, "cpus", "descending range '" + std::string(item) + "'");
      count += static_cast<unsigned>(b - a + 1);
    }
    pos = comma + 1;
  }
  return count;
}

unsigned read_online_cpus(const Fs& fs) {
  const char* f = "sys/devices/system/cpu/online";
  if (auto r = fs.try_read(f); r.ok()) return parse_cpu_list_count(r.text, fs.path(f).string());
  const auto text = fs.read("proc/cpuinfo");
  unsigned n = 0;
  for (auto line : split_lines(text)) {
    auto colon = line.find(':');
    if (colon != std::string_view::npos && trim(line.substr(0, colon)) == "processor") ++n;
  }
  if (n == 0) throw ParseError(fs.path("proc/cpuinfo").string(), 0, "processor", "no 'processor' lines");
  return n;
}

}  // namespace harness::kernel
