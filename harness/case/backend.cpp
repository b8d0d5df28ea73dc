// Swap backends: zram (high priority) and the low-priority swapfile (study; docs/DESIGN.md "Configurations").
#include "harness/case/backend.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "harness/kernel/errors.hpp"
#include "harness/kernel/swap.hpp"

namespace hcase {

Backend::Backend(const kernel::Fs& fs, const BackendSpec& spec, Configuration conf)
    : fs_(fs), spec_(spec), conf_(conf) {}

namespace {
void must(std::vector<StepRecord>& steps, StepRecord r) {
  steps.push_back(r);
  if (r.err != 0) throw std::runtime_error(fmt::format("backend step '{}' failed: {}", r.step, r.message));
}
bool swap_active(const kernel::Fs& fs, const std::string& path) {
  auto swaps = kernel::read_swaps(fs);
  return std::any_of(swaps.begin(), swaps.end(), [&](const kernel::SwapDevice& d) { return d.path == path; });
}
}  // namespace

void Backend::prepare(std::vector<StepRecord>& steps) {
  auto check = kernel::validate_swapfile(fs_, spec_.swapfile_path);
  if (!check.ok()) {
    std::string why;
    for (const auto& p : check.problems) why += (why.empty() ? "" : "; ") + p;
    steps.push_back({"validate swapfile " + spec_.swapfile_path, 0, EINVAL, why});
    throw std::runtime_error(fmt::format("swapfile {} unusable: {}", spec_.swapfile_path, why));
  }
  steps.push_back({"validate swapfile " + spec_.swapfile_path, 0, 0, "ok"});
  auto ids = kernel::list_zram_devices(fs_);
  if (std::find(ids.begin(), ids.end(), 0) != ids.end()) {
    zram_.emplace(fs_, 0);
  } else {
    if (!kernel::zram_control_present(fs_))
      throw std::runtime_error("zram module not loaded (/sys/class/zram-control absent): insmod zram.ko first");
    zram_.emplace(kernel::Zram::hot_add(fs_));
    steps.push_back({fmt::format("zram hot_add -> zram{}", zram_->id()), 0, 0, "ok"});
  }
  auto& z = *zram_;
  if (z.initialized()) must(steps, timed_step("zram reset", [&] { return z.reset(); }));
  must(steps, timed_step("zram comp_algorithm " + spec_.zram_algorithm, [&] { return z.set_comp_algorithm(spec_.zram_algorithm); }));
  must(steps, timed_step(fmt::format("zram disksize {}", spec_.zram_disksize_bytes), [&] {
         return z.set_disksize(static_cast<std::uint64_t>(spec_.zram_disksize_bytes));
       }));
  must(steps, timed_step("mkswap " + z.dev_path(), [&] { return kernel::mkswap(fs_, z.dev_path()); }));
  must(steps, timed_step(fmt::format("swapon {} prio {}", spec_.swapfile_path, spec_.swapfile_priority),
                         [&] { return kernel::swapon(fs_, spec_.swapfile_path, spec_.swapfile_priority); }));
  swapfile_on_ = true;
  if (conf_ != Configuration::DelayedActivation) {
    must(steps, timed_step(fmt::format("swapon {} prio {}", z.dev_path(), spec_.zram_priority),
                           [&] { return kernel::swapon(fs_, z.dev_path(), spec_.zram_priority); }));
    zram_on_ = zram_was_on_ = true;
  }
}

StepRecord Backend::activate() {
  if (!zram_) return {"swapon zram", 0, ENODEV, "backend not prepared"};
  if (zram_on_) return {"swapon " + zram_->dev_path(), 0, EALREADY, "already on"};
  auto r = timed_step(fmt::format("swapon {} prio {}", zram_->dev_path(), spec_.zram_priority),
                      [&] { return kernel::swapon(fs_, zram_->dev_path(), spec_.zram_priority); });
  if (r.err == 0) zram_on_ = zram_was_on_ = true;
  return r;
}

void Backend::teardown(std::vector<StepRecord>& steps) {
  if (zram_ && zram_on_) {
    steps.push_back(timed_step("swapoff " + zram_->dev_path(), [&] { return kernel::swapoff(fs_, zram_->dev_path()); }));
    if (steps.back().err == 0) zram_on_ = false;
  }
  if (swapfile_on_) {
    steps.push_back(timed_step("swapoff " + spec_.swapfile_path, [&] { return kernel::swapoff(fs_, spec_.swapfile_path); }));
    if (steps.back().err == 0) swapfile_on_ = false;
  }
  if (zram_ && !zram_on_) steps.push_back(timed_step("zram reset", [&] { return zram_->reset(); }));
}

std::vector<std::string> Backend::enabled_paths() const {
  std::vector<std::string> out{spec_.swapfile_path};
  if (zram_ && zram_was_on_) out.push_back(zram_->dev_path());
  return out;
}

void Backend::cleanup_leftovers(const kernel::Fs& fs, const BackendSpec& spec, std::vector<StepRecord>& steps) {
  try {
    if (swap_active(fs, spec.swapfile_path))
      steps.push_back(timed_step("leftover swapoff " + spec.swapfile_path, [&] { return kernel::swapoff(fs, spec.swapfile_path); }));
    kernel::Zram z(fs, 0);
    if (!z.exists()) return;
    if (swap_active(fs, z.dev_path()))
      steps.push_back(timed_step("leftover swapoff " + z.dev_path(), [&] { return kernel::swapoff(fs, z.dev_path()); }));
    if (z.initialized()) steps.push_back(timed_step("leftover zram reset", [&] { return z.reset(); }));
  } catch (const kernel::Error& e) {
    steps.push_back({"leftover backend cleanup", 0, EIO, e.what()});
  }
}

}  // namespace hcase
