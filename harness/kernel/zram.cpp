// zram devices (zram.hpp).
#include "harness/kernel/zram.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>

#include "harness/kernel/errors.hpp"
#include "harness/kernel/keyed.hpp"
#include "harness/kernel/size.hpp"
#include "harness/kernel/text.hpp"

namespace harness::kernel {

ZramMmStat parse_zram_mm_stat(std::string_view text, const std::string& file) {
  static const char* names[] = {"orig_data_size", "compr_data_size", "mem_used_total",
                                "mem_limit",      "mem_used_max",    "same_pages",
                                "pages_compacted", "huge_pages",     "huge_pages_since"};
  // Words cut off one by one into a fixed array: no allocation (read every tick).
  std::string_view w[9], more;
  size_t n = 0, words = 0;
  while (n < 9 && next_word(text, w[n])) ++n;
  words = n;
  while (next_word(text, more)) ++words;
  if (words < 7)
    throw ParseError(file, 1, names[words], "expected at least 7 columns, got " + std::to_string(words));
  std::uint64_t v[9] = {};
  for (size_t i = 0; i < n; ++i) {
    const auto [end, ec] = std::from_chars(w[i].data(), w[i].data() + w[i].size(), v[i]);
    if (ec != std::errc() || end != w[i].data() + w[i].size()) v[i] = parse_u64(w[i], file, 1, names[i]);  // throws
  }
  ZramMmStat s;
  s.orig_data_size_bytes = v[0];
  s.compr_data_size_bytes = v[1];
  s.mem_used_total_bytes = v[2];
  s.mem_limit_bytes = v[3];
  s.mem_used_max_bytes = v[4];
  s.same_pages = v[5];
  s.pages_compacted = v[6];
  if (n > 7) s.huge_pages = v[7];
  if (n > 8) s.huge_pages_since = v[8];
  return s;
}

Zram::Zram(Fs fs, int id) : fs_(std::move(fs)), id_(id) {}
std::string Zram::sysfs_dir() const { return "sys/block/zram" + std::to_string(id_); }
std::string Zram::dev_path() const { return "/dev/zram" + std::to_string(id_); }
bool Zram::exists() const { return fs_.is_dir(sysfs_dir()); }

Zram Zram::hot_add(const Fs& fs) {
  const char* f = "sys/class/zram-control/hot_add";
  const auto text = fs.read(f);
  const auto id = parse_u64(trim(text), fs.path(f).string(), 1, "hot_add");
  return Zram(fs, static_cast<int>(id));
}

WriteResult Zram::hot_remove() const { return fs_.write("sys/class/zram-control/hot_remove", std::to_string(id_)); }

BracketChoice Zram::comp_algorithm() const {
  const auto f = sysfs_dir() + "/comp_algorithm";
  return parse_bracket_choice(fs_.read(f), fs_.path(f).string());
}
WriteResult Zram::set_comp_algorithm(const std::string& name) const {
  return fs_.write(sysfs_dir() + "/comp_algorithm", name);
}
std::uint64_t Zram::disksize_bytes() const {
  const auto f = sysfs_dir() + "/disksize";
  return parse_u64(trim(fs_.read(f)), fs_.path(f).string(), 1, "disksize");
}
WriteResult Zram::set_disksize(std::uint64_t bytes) const {
  return fs_.write(sysfs_dir() + "/disksize", format_size_suffix(bytes));
}
bool Zram::initialized() const {
  const auto f = sysfs_dir() + "/initstate";
  return parse_u64(trim(fs_.read(f)), fs_.path(f).string(), 1, "initstate") != 0;
}
ZramMmStat Zram::mm_stat() const {
  const auto f = sysfs_dir() + "/mm_stat";
  return parse_zram_mm_stat(fs_.read(f), fs_.path(f).string());
}
WriteResult Zram::reset() const { return fs_.write(sysfs_dir() + "/reset", "1"); }

std::vector<int> list_zram_devices(const Fs& fs) {
  std::vector<int> ids;
  if (!fs.is_dir("sys/block")) return ids;
  for (const auto& name : fs.list("sys/block")) {
    if (name.rfind("zram", 0) != 0 || name.size() == 4) continue;
    bool digits = true;
    for (size_t i = 4; i < name.size(); ++i) digits = digits && name[i] >= '0' && name[i] <= '9';
    if (digits) ids.push_back(std::stoi(name.substr(4)));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

bool zram_control_present(const Fs& fs) { return fs.is_dir("sys/class/zram-control"); }

}  // namespace harness::kernel
