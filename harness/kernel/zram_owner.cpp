// The harness's own zram device: ownership marker, spare-device fallback, EBUSY retry
// (zram_owner.hpp).
#include "harness/kernel/zram_owner.hpp"

#include <time.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "harness/kernel/errors.hpp"
#include "harness/kernel/keyed.hpp"
#include "harness/kernel/swap.hpp"
#include "harness/kernel/text.hpp"
#include "harness/kernel/zram.hpp"

namespace harness::kernel {

const char* to_string(ZramOrigin o) { return o == ZramOrigin::HotAdd ? "hot_add" : "unused-device"; }

std::string current_boot_id(const Fs& fs) {
  auto r = fs.try_read("proc/sys/kernel/random/boot_id");
  return r.ok() ? std::string(trim(r.text)) : std::string();
}

std::optional<ZramOwnership> read_zram_owner(const Fs& fs) {
  auto r = fs.try_read(kZramOwnerFile);
  if (r.err == ENOENT) return std::nullopt;
  const std::string file = fs.path(kZramOwnerFile).string();
  if (!r.ok()) throw IoError(file, r.err, "read");
  ZramOwnership o;
  bool have_id = false, have_how = false;
  int lineno = 0;
  for (auto line : split_lines(r.text)) {
    ++lineno;
    auto w = split_ws(line);
    if (w.empty()) continue;
    if (w.size() > 2) throw ParseError(file, lineno, std::string(w[0]), "expected 'key value'");
    const std::string_view v = w.size() == 2 ? w[1] : std::string_view();
    if (w[0] == "id") {
      o.id = static_cast<int>(parse_u64(v, file, lineno, "id"));
      have_id = true;
    } else if (w[0] == "boot_id") {
      o.boot_id = std::string(v);
    } else if (w[0] == "how") {
      if (v == "hot_add")
        o.how = ZramOrigin::HotAdd;
      else if (v == "unused-device")
        o.how = ZramOrigin::UnusedDevice;
      else
        throw ParseError(file, lineno, "how", "expected hot_add or unused-device, got '" + std::string(v) + "'");
      have_how = true;
    } else {
      throw ParseError(file, lineno, std::string(w[0]), "unknown key");
    }
  }
  if (!have_id) throw ParseError(file, 0, "id", "missing");
  if (!have_how) throw ParseError(file, 0, "how", "missing");
  return o;
}

void write_zram_owner(const Fs& fs, const ZramOwnership& o) {
  const auto dst = fs.path(kZramOwnerFile);
  std::error_code ec;
  std::filesystem::create_directories(dst.parent_path(), ec);
  if (ec) throw IoError(dst.parent_path().string(), ec.value(), "mkdir");
  const auto tmp = dst.string() + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << "id " << o.id << "\n";
    if (!o.boot_id.empty()) f << "boot_id " << o.boot_id << "\n";
    f << "how " << to_string(o.how) << "\n";
    f.flush();
    if (!f) throw IoError(tmp, EIO, "write");
  }
  std::filesystem::rename(tmp, dst, ec);
  if (ec) throw IoError(dst.string(), ec.value(), "rename");
}

bool remove_zram_owner(const Fs& fs) {
  std::error_code ec;
  return std::filesystem::remove(fs.path(kZramOwnerFile), ec);
}

bool zram_owner_current(const Fs& fs, const ZramOwnership& o) {
  if (o.boot_id != current_boot_id(fs)) return false;
  return Zram(fs, o.id).exists();
}

std::optional<ZramOwnership> owned_zram(const Fs& fs) {
  try {
    auto o = read_zram_owner(fs);
    if (o && zram_owner_current(fs, *o)) return o;
  } catch (const Error&) {
    // an unreadable owner record is no ownership: the caller treats the device as not ours
  }
  return std::nullopt;
}

std::optional<int> find_unused_zram(const Fs& fs) {
  std::vector<std::string> swapping, mounted;
  if (auto r = fs.try_read("proc/swaps"); r.ok()) {
    try {
      for (const auto& d : parse_swaps(r.text, "/proc/swaps")) swapping.push_back(d.path);
    } catch (const Error&) {
      return std::nullopt;  // cannot tell what is in use: borrow nothing
    }
  }
  if (auto r = fs.try_read("proc/mounts"); r.ok())
    for (auto line : split_lines(r.text)) {
      auto w = split_ws(line);
      if (!w.empty()) mounted.emplace_back(w[0]);
    }
  auto listed = [](const std::vector<std::string>& v, const std::string& p) {
    for (const auto& s : v)
      if (s == p) return true;
    return false;
  };
  for (int id : list_zram_devices(fs)) {
    Zram z(fs, id);
    try {
      if (z.initialized() || z.disksize_bytes() != 0) continue;
    } catch (const Error&) {
      continue;
    }
    if (listed(swapping, z.dev_path()) || listed(mounted, z.dev_path())) continue;
    const auto holders = z.sysfs_dir() + "/holders";
    if (fs.is_dir(holders) && !fs.list(holders).empty()) continue;
    return id;
  }
  return std::nullopt;
}

RetriedWrite retry_on_ebusy(const std::function<WriteResult()>& op, const BusyRetryPolicy& policy) {
  RetriedWrite out;
  out.result = op();
  for (std::int64_t delay : policy.delays_ns) {
    if (out.result.err != EBUSY) break;
    struct timespec ts{static_cast<time_t>(delay / 1'000'000'000), static_cast<long>(delay % 1'000'000'000)};
    while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
    out.waited_ns += delay;
    ++out.retries;
    out.result = op();
  }
  return out;
}

}  // namespace harness::kernel
