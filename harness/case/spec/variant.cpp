// A/B variant apply / restore (see variant.hpp).
#include "harness/case/spec/variant.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <sstream>

#include "harness/case/spec/safe_path.hpp"
#include "harness/kernel/errors.hpp"
#include "harness/kernel/procfs.hpp"

namespace harness::case_ {

namespace {

/// Trimmed, whitespace runs collapsed to one space.
std::string norm(const std::string& s) {
  std::istringstream in(s);
  std::string w, out;
  while (in >> w) out += (out.empty() ? "" : " ") + w;
  return out;
}

std::optional<std::string> bracketed(const std::string& s) {
  const auto a = s.find('['), z = s.find(']');
  if (a == std::string::npos || z == std::string::npos || z < a) return std::nullopt;
  return s.substr(a + 1, z - a - 1);
}

std::optional<long long> as_int(const std::string& s) {
  if (s.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 0);
  if (errno || end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

std::string err_text(int err) { return fmt::format("{} ({}, errno {})", std::strerror(err), harness::kernel::errno_name(err), err); }

}  // namespace

bool valid_sysctl_name(const std::string& name) {
  static const std::regex re("[a-z0-9_]+([.][a-z0-9_-]+)+");
  return name.size() <= 128 && std::regex_match(name, re);
}

const std::vector<std::string>& allowed_sysctls() {
  // What an A/B comparison of reclaim may vary; every other sysctl (kernel.panic_on_oops,
  // vm.panic_on_oom, vm.overcommit_*, vm.drop_caches, ...) is refused: a variant runs as
  // root on the VM and must not be able to panic, reboot or starve it.
  static const std::vector<std::string> names{
      "vm.swappiness",           "vm.page-cluster",          "vm.watermark_scale_factor",
      "vm.watermark_boost_factor", "vm.min_free_kbytes",     "vm.vfs_cache_pressure",
      "vm.dirty_ratio",          "vm.dirty_background_ratio", "vm.dirty_bytes",
      "vm.dirty_background_bytes", "vm.dirty_expire_centisecs", "vm.dirty_writeback_centisecs",
      "vm.compaction_proactiveness", "vm.extfrag_threshold",  "vm.percpu_pagelist_high_fraction",
      "vm.zone_reclaim_mode",    "vm.stat_interval"};
  return names;
}

const std::vector<std::string>& allowed_sysfs_knobs() {
  static const std::vector<std::string> paths{
      "/sys/kernel/mm/lru_gen/enabled",
      "/sys/kernel/mm/lru_gen/min_ttl_ms",
      "/sys/kernel/mm/transparent_hugepage/enabled",
      "/sys/kernel/mm/transparent_hugepage/defrag",
      "/sys/kernel/mm/transparent_hugepage/shmem_enabled",
      "/sys/kernel/mm/transparent_hugepage/khugepaged/defrag",
      "/sys/kernel/mm/transparent_hugepage/khugepaged/max_ptes_none",
      "/sys/kernel/mm/transparent_hugepage/khugepaged/max_ptes_swap",
      "/sys/kernel/mm/transparent_hugepage/khugepaged/pages_to_scan",
      "/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs",
      "/sys/kernel/mm/transparent_hugepage/khugepaged/alloc_sleep_millisecs",
      "/sys/kernel/mm/swap/vma_ra_enabled"};
  return paths;
}

Checked check_sysctl_name(const std::string& name) {
  if (!valid_sysctl_name(name)) return problem("is not a sysctl name ([a-z0-9_.-]+ with a dot, e.g. vm.swappiness)");
  const auto& ok = allowed_sysctls();
  if (std::find(ok.begin(), ok.end(), name) == ok.end())
    return problem("is not a sysctl a variant may set (the vm.* reclaim, swap, watermark, writeback and "
                   "compaction knobs listed in docs/CAMPAIGN.md \"variants\")");
  return {};
}

std::string sysctl_path(const std::string& name) {
  std::string p = "proc/sys/" + name;
  std::replace(p.begin() + 9, p.end(), '.', '/');
  return p;
}

Checked check_sysfs_path(const std::string& path) {
  if (auto safe = check_safe_path(path); !safe) return safe;
  static const std::string prefix = "/sys/kernel/mm/";
  if (path.rfind(prefix, 0) != 0 || path.size() == prefix.size())
    return problem("must be a file under /sys/kernel/mm/ (the only sysfs knobs a variant may set)");
  if (path.back() == '/') return problem("must name a file, not a directory");
  const auto& ok = allowed_sysfs_knobs();
  if (std::find(ok.begin(), ok.end(), path) == ok.end())
    return problem("is not a sysfs knob a variant may set (the MGLRU, THP and swap readahead files listed in "
                   "docs/CAMPAIGN.md \"variants\")");
  return {};
}

bool valid_variant_value(const std::string& value) {
  static const std::regex re("[A-Za-z0-9 _.,:=+-]{1,64}");
  return std::regex_match(value, re);
}

bool valid_cmdline_param(const std::string& param) {
  static const std::regex re("[A-Za-z0-9_.,=:+-]{1,256}");
  return std::regex_match(param, re);
}

bool readback_matches(const std::string& written, const std::string& readback) {
  const std::string w = norm(written), r = norm(readback);
  if (w == r) return true;
  if (auto b = bracketed(r); b && *b == w) return true;
  const auto wi = as_int(w), ri = as_int(r);
  return wi && ri && *wi == *ri;
}

std::string restore_value(const std::string& before) {
  if (auto b = bracketed(before)) return *b;
  return norm(before);
}

nlohmann::json KnobRecord::to_json() const {
  auto opt = [](const std::optional<std::string>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  nlohmann::json j{{"path", "/" + path},
                   {"before", opt(before)},
                   {"written", write_attempted ? nlohmann::json(written) : nlohmann::json()},
                   {"readback", opt(readback)},
                   {"matches", readback ? nlohmann::json(readback_matches(written, *readback)) : nlohmann::json()},
                   {"error", error.empty() ? nlohmann::json() : nlohmann::json(error)}};
  if (restore_attempted)
    j["restore"] = {{"written", before ? nlohmann::json(restore_value(*before)) : nlohmann::json()},
                    {"readback", opt(restored_readback)},
                    {"ok", restore_error.empty()},
                    {"error", restore_error.empty() ? nlohmann::json() : nlohmann::json(restore_error)}};
  else
    j["restore"] = nullptr;
  return j;
}

Checked VariantApplier::apply_knob(const std::string& key, const std::string& path, const std::string& value) {
  KnobRecord r;
  r.key = key;
  r.path = path;
  r.written = value;
  auto fail = [&](int err, const std::string& what) {
    r.err = err;
    r.error = what;
    records_.push_back(r);
    return Checked(problem(fmt::format("variant {}: {} (/{}): {}", v_.name, key, path, what)));
  };
  const auto before = fs_.try_read(path);
  if (!before.ok()) return fail(before.err, "cannot read it: " + err_text(before.err));
  r.before = norm(before.text);
  r.write_attempted = true;
  const auto w = fs_.write(path, value);
  if (!w.ok()) return fail(w.err, fmt::format("writing '{}' failed: {}", value, err_text(w.err)));
  r.write_ok = true;
  const auto back = fs_.try_read(path);
  if (!back.ok()) return fail(back.err, "reading it back failed: " + err_text(back.err));
  r.readback = norm(back.text);
  if (!readback_matches(value, *r.readback) && *r.readback == *r.before)
    return fail(0, fmt::format("writing '{}' had no effect: it still reads '{}'", value, *r.readback));
  records_.push_back(r);
  return {};
}

Checked VariantApplier::apply() {
  // 1. the boot: the runner must have booted this variant's guest.
  if (!v_.cmdline.empty()) {
    std::string cmdline;
    try {
      cmdline = harness::kernel::kernel_cmdline(fs_);
    } catch (const harness::kernel::Error& e) {
      return problem(fmt::format("variant {}: cannot read /proc/cmdline: {}", v_.name, e.what()));
    }
    std::istringstream in(cmdline);
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    nlohmann::json present = nlohmann::json::object();
    std::string missing;
    for (const auto& p : v_.cmdline) {
      const bool ok = std::find(words.begin(), words.end(), p) != words.end();
      present[p] = ok;
      if (!ok) missing += (missing.empty() ? "" : ", ") + p;
    }
    boot_["cmdline"] = present;
    if (!missing.empty())
      return problem(fmt::format("variant {}: the guest was booted without {} (its /proc/cmdline: '{}'): wrong guest",
                                 v_.name, missing, cmdline));
  }
  if (v_.kernel_release) {
    std::string actual;
    try {
      actual = harness::kernel::kernel_release(fs_);
    } catch (const harness::kernel::Error& e) {
      return problem(fmt::format("variant {}: cannot read the kernel release: {}", v_.name, e.what()));
    }
    boot_["kernel_release"] = {{"expected", *v_.kernel_release}, {"actual", actual}};
    if (actual != *v_.kernel_release)
      return problem(fmt::format("variant {}: the guest runs kernel {} but the variant's image has {}: wrong guest",
                                 v_.name, actual, *v_.kernel_release));
  }
  // 2. the knobs.
  for (const auto& [k, v] : v_.sysctls)
    if (auto c = apply_knob(k, sysctl_path(k), v); !c) return c;
  for (const auto& [k, v] : v_.sysfs)
    if (auto c = apply_knob(k, k.substr(1), v); !c) return c;
  return {};
}

std::vector<std::string> VariantApplier::restore() {
  if (restored_) return restore_problems_;
  restored_ = true;
  for (auto it = records_.rbegin(); it != records_.rend(); ++it) {
    KnobRecord& r = *it;
    if (!r.before || !r.write_ok) continue;  // nothing was written
    r.restore_attempted = true;
    const std::string value = restore_value(*r.before);
    const auto w = fs_.write(r.path, value);
    if (!w.ok()) {
      r.restore_error = fmt::format("writing back '{}' failed: {}", value, err_text(w.err));
    } else {
      const auto back = fs_.try_read(r.path);
      if (!back.ok()) {
        r.restore_error = "reading it back failed: " + err_text(back.err);
      } else {
        r.restored_readback = norm(back.text);
        if (*r.restored_readback != *r.before && !readback_matches(value, *r.restored_readback))
          r.restore_error = fmt::format("wrote back '{}' but it reads '{}'", value, *r.restored_readback);
      }
    }
    if (!r.restore_error.empty())
      restore_problems_.push_back(fmt::format("variant {}: {} not restored to '{}': {}", v_.name, r.key, *r.before,
                                              r.restore_error));
  }
  return restore_problems_;
}

nlohmann::json VariantApplier::to_json() const {
  nlohmann::json settings = nlohmann::json::object();
  for (const auto& r : records_) settings[r.key] = r.to_json();
  return {{"name", v_.name},
          {"pair_id", v_.pair_id},
          {"boot", boot_},
          {"settings", settings},
          {"restored", restored_ ? nlohmann::json(restore_problems_.empty()) : nlohmann::json()},
          {"restore_problems", restore_problems_}};
}

}  // namespace harness::case_
