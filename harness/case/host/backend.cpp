// Swap backends: the harness's own zram (high priority) and the low-priority swapfile
// (study; docs/DESIGN.md "Configurations"; device ownership: kernel/zram_owner.hpp).
#include "harness/case/host/backend.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "harness/kernel/errors.hpp"
#include "harness/kernel/swap.hpp"
#include "harness/text/join.hpp"

namespace harness::case_ {

Backend::Backend(const harness::kernel::Fs& fs, const BackendSpec& spec, ZramAtStart start, harness::kernel::BusyRetryPolicy retry)
    : fs_(fs), spec_(spec), start_(start), retry_(std::move(retry)) {}

int ZramRecord::ebusy_retries() const {
  int total = 0;
  for (const auto& r : retried_steps) total += r.retries;
  return total;
}

nlohmann::json to_json(const ZramRecord& z) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& r : z.retried_steps) steps.push_back({{"step", r.step}, {"retries", r.retries}, {"errno", r.err}});
  return {{"device", z.device},
          {"id", z.id},
          {"how", harness::kernel::to_string(z.how)},
          {"released", z.released},
          {"ebusy_retries", z.ebusy_retries()},
          {"retried_steps", steps}};
}

namespace {
std::optional<harness::kernel::SwapDevice> swap_entry(const harness::kernel::Fs& fs, const std::string& path) {
  for (auto& d : harness::kernel::read_swaps(fs))
    if (d.path == path) return d;
  return std::nullopt;
}

/// A step retried on EBUSY (harness::kernel::retry_on_ebusy); the retries go into the record.
StepRecord retried_step(const std::string& name, const std::function<harness::kernel::WriteResult()>& op,
                        const harness::kernel::BusyRetryPolicy& policy) {
  StepRecord r;
  r.step = name;
  const auto t0 = harness::kernel::monotonic_ns();
  const auto w = harness::kernel::retry_on_ebusy(op, policy);
  r.duration_ns = harness::kernel::monotonic_ns() - t0;
  r.err = w.result.err;
  r.retries = w.retries;
  r.message = w.result.message();
  if (w.retries > 0)
    r.message += fmt::format(" after {} EBUSY retr{} ({} ms of backoff)", w.retries, w.retries == 1 ? "y" : "ies",
                             w.waited_ns / 1'000'000);
  return r;
}

/// "<step> failed with ENOMEM (Cannot allocate memory)".
std::string failed(const StepRecord& s) {
  return fmt::format("{} failed with {} ({})", s.step, harness::kernel::errno_name(s.err), std::strerror(s.err));
}

/// The cause of a swapoff that failed: errno, what is still swapped on the device, and
/// which processes hold swapped memory: the cause first, so that the operator can act on it.
std::string swapoff_cause(const harness::kernel::Fs& fs, const StepRecord& s, const std::string& path) {
  std::string msg = failed(s);
  try {
    if (auto d = swap_entry(fs, path)) msg += fmt::format("; {} KiB still swapped on {}", d->used_kib, path);
  } catch (const harness::kernel::Error&) {
    // the message keeps the errno; the swap table is extra detail
  }
  try {
    msg += "; swapped memory held by: " + harness::kernel::describe_swap_holders(harness::kernel::swap_holders(fs));
  } catch (const harness::kernel::Error& e) {
    msg += fmt::format("; holders unknown ({})", e.what());
  }
  if (s.err == ENOMEM)
    msg += "; swapoff must fault those pages back in and their cgroup cannot take them: stop or kill those "
           "processes (or raise their cgroup's memory.max), then run the case again";
  return msg;
}
}  // namespace

StepRecord Backend::retried(const std::string& name, const std::function<harness::kernel::WriteResult()>& op) {
  auto r = retried_step(name, op, retry_);
  if (r.retries > 0) retried_steps_.push_back({r.step, r.retries, r.err});
  return r;
}

void Backend::take_zram(std::vector<StepRecord>& steps) {
  const auto t0 = harness::kernel::monotonic_ns();
  if (harness::kernel::zram_control_present(fs_)) {
    try {
      zram_.emplace(harness::kernel::Zram::hot_add(fs_));
    } catch (const harness::kernel::Error& e) {
      steps.push_back({"zram hot_add", harness::kernel::monotonic_ns() - t0, EIO, e.what()});
      throw std::runtime_error(fmt::format("backend step 'zram hot_add' failed: {}", e.what()));
    }
    how_ = harness::kernel::ZramOrigin::HotAdd;
  } else {
    const auto ids = harness::kernel::list_zram_devices(fs_);
    if (ids.empty())
      throw std::runtime_error("zram module not loaded (/sys/class/zram-control absent, no /sys/block/zram*): "
                               "modprobe zram (or insmod zram.ko) first");
    const auto id = harness::kernel::find_unused_zram(fs_);
    if (!id)
      throw std::runtime_error(fmt::format(
          "no /sys/class/zram-control (the harness cannot create its own zram device) and none of the {} zram "
          "device(s) is unused (each is initialised, swapped on, mounted or held); the harness never takes a "
          "device it did not create: load zram with a spare device (modprobe zram num_devices={})",
          ids.size(), ids.size() + 1));
    zram_.emplace(fs_, *id);
    how_ = harness::kernel::ZramOrigin::UnusedDevice;
  }
  try {
    harness::kernel::write_zram_owner(fs_, {zram_->id(), harness::kernel::current_boot_id(fs_), *how_});
  } catch (const harness::kernel::Error& e) {
    steps.push_back({"zram ownership marker", harness::kernel::monotonic_ns() - t0, EIO, e.what()});
    throw std::runtime_error(fmt::format("backend step 'zram ownership marker' failed: {}", e.what()));
  }
  steps.push_back({*how_ == harness::kernel::ZramOrigin::HotAdd
                       ? fmt::format("zram hot_add -> zram{}", zram_->id())
                       : fmt::format("zram: no /sys/class/zram-control; borrowing unused zram{} (reset, not removed, "
                                     "at the end)",
                                     zram_->id()),
                   harness::kernel::monotonic_ns() - t0, 0, "ok"});
}

void Backend::prepare(std::vector<StepRecord>& steps) {
  auto check = harness::kernel::validate_swapfile(fs_, spec_.swapfile_path);
  if (!check.ok()) {
    const std::string why = text::join(check.problems, "; ");
    steps.push_back({"validate swapfile " + spec_.swapfile_path, 0, EINVAL, why});
    throw std::runtime_error(fmt::format("swapfile {} unusable: {}", spec_.swapfile_path, why));
  }
  steps.push_back({"validate swapfile " + spec_.swapfile_path, 0, 0, "ok"});
  take_zram(steps);
  auto& z = *zram_;
  // A device just created (or chosen because it is unused) is uninitialised; a reset
  // here would only matter for a device somebody configured in between.
  if (z.initialized()) must_step("backend", steps, retried("zram reset", [&] { return z.reset(); }));
  must_step("backend", steps, timed_step("zram comp_algorithm " + spec_.zram_algorithm, [&] { return z.set_comp_algorithm(spec_.zram_algorithm); }));
  must_step("backend", steps, timed_step(fmt::format("zram disksize {}", spec_.zram_disksize_bytes), [&] {
              return z.set_disksize(static_cast<std::uint64_t>(spec_.zram_disksize_bytes));
            }));
  must_step("backend", steps, timed_step("mkswap " + z.dev_path(), [&] { return harness::kernel::mkswap(fs_, z.dev_path()); }));
  if (swapfile_at_start()) {
    must_step("backend", steps, timed_step(fmt::format("swapon {} prio {}", spec_.swapfile_path, spec_.swapfile_priority),
                                           [&] { return harness::kernel::swapon(fs_, spec_.swapfile_path, spec_.swapfile_priority); }));
    swapfile_on_ = true;
  } else {
    steps.push_back({"swapfile left off until the trigger (backend.delayed_swapfile: off)", 0, 0, "ok"});
  }
  if (start_ == ZramAtStart::On) {
    must_step("backend", steps, timed_step(fmt::format("swapon {} prio {}", z.dev_path(), spec_.zram_priority),
                                           [&] { return harness::kernel::swapon(fs_, z.dev_path(), spec_.zram_priority); }));
    zram_on_ = zram_was_on_ = true;
  }
}

StepRecord Backend::activate() {
  if (!zram_) return {"swapon zram", 0, ENODEV, "backend not prepared"};
  if (zram_on_) return {"swapon " + zram_->dev_path(), 0, EALREADY, "already on"};
  auto r = timed_step(fmt::format("swapon {} prio {}", zram_->dev_path(), spec_.zram_priority),
                      [&] { return harness::kernel::swapon(fs_, zram_->dev_path(), spec_.zram_priority); });
  if (r.err == 0) zram_on_ = zram_was_on_ = true;
  return r;
}

bool Backend::swapfile_at_start() const {
  return start_ == ZramAtStart::On || spec_.delayed_swapfile == DelayedSwapfile::Active;
}

std::optional<StepRecord> Backend::activate_swapfile() {
  if (swapfile_on_ || !zram_) return std::nullopt;
  auto r = timed_step(fmt::format("swapon {} prio {}", spec_.swapfile_path, spec_.swapfile_priority),
                      [&] { return harness::kernel::swapon(fs_, spec_.swapfile_path, spec_.swapfile_priority); });
  if (r.err == 0) swapfile_on_ = true;
  return r;
}

void Backend::teardown(std::vector<StepRecord>& steps) {
  if (zram_ && zram_on_) {
    steps.push_back(timed_step("swapoff " + zram_->dev_path(), [&] { return harness::kernel::swapoff(fs_, zram_->dev_path()); }));
    if (steps.back().err == 0) zram_on_ = false;
  }
  if (swapfile_on_) {
    steps.push_back(timed_step("swapoff " + spec_.swapfile_path, [&] { return harness::kernel::swapoff(fs_, spec_.swapfile_path); }));
    if (steps.back().err == 0) swapfile_on_ = false;
  }
  // Still swapped on: never reset or remove under the kernel's feet (EBUSY would not be
  // transient); the marker stays for the next case's leftover cleanup.
  if (!zram_ || zram_on_ || zram_released_) return;
  steps.push_back(retried("zram reset", [&] { return zram_->reset(); }));
  if (steps.back().err != 0) return;
  if (how_ == harness::kernel::ZramOrigin::HotAdd) {
    steps.push_back(retried(fmt::format("zram hot_remove zram{}", zram_->id()), [&] { return zram_->hot_remove(); }));
    if (steps.back().err != 0) return;
  }
  zram_released_ = true;
  harness::kernel::remove_zram_owner(fs_);
}

std::vector<std::string> Backend::enabled_paths() const {
  // The swapfile always: a swapfile left off must be off at the end all the same.
  std::vector<std::string> out{spec_.swapfile_path};
  if (zram_ && zram_was_on_) out.push_back(zram_->dev_path());
  return out;
}

std::optional<ZramRecord> Backend::zram_record() const {
  if (!zram_) return std::nullopt;
  return ZramRecord{zram_->dev_path(), zram_->id(), *how_, zram_released_, retried_steps_};
}

nlohmann::json Backend::zram_json() const {
  const auto z = zram_record();
  return z ? to_json(*z) : nlohmann::json();
}

LeftoverCleanup Backend::cleanup_leftovers(const harness::kernel::Fs& fs, const BackendSpec& spec, std::vector<StepRecord>& steps,
                                           const harness::kernel::BusyRetryPolicy& retry) {
  LeftoverCleanup out;
  auto stop = [&](std::string cause) {
    out.released = false;
    out.cause = "leftover of an earlier case cannot be released: " + std::move(cause);
    return out;
  };
  try {
    if (swap_entry(fs, spec.swapfile_path)) {
      steps.push_back(timed_step("leftover swapoff " + spec.swapfile_path, [&] { return harness::kernel::swapoff(fs, spec.swapfile_path); }));
      if (steps.back().err != 0) return stop(swapoff_cause(fs, steps.back(), spec.swapfile_path));
    }
    const auto owner = harness::kernel::read_zram_owner(fs);
    if (!owner) return out;
    harness::kernel::Zram z(fs, owner->id);
    if (!harness::kernel::zram_owner_current(fs, *owner)) {
      harness::kernel::remove_zram_owner(fs);
      steps.push_back({fmt::format("drop stale zram ownership marker (zram{}: {})", owner->id,
                                   z.exists() ? "marker of another boot" : "device gone"),
                       0, 0, "ok"});
      return out;
    }
    if (swap_entry(fs, z.dev_path())) {
      steps.push_back(timed_step("leftover swapoff " + z.dev_path(), [&] { return harness::kernel::swapoff(fs, z.dev_path()); }));
      if (steps.back().err != 0) return stop(swapoff_cause(fs, steps.back(), z.dev_path()));
    }
    if (z.initialized()) {
      steps.push_back(retried_step("leftover zram reset", [&] { return z.reset(); }, retry));
      if (steps.back().err != 0) return stop(failed(steps.back()));
    }
    if (owner->how == harness::kernel::ZramOrigin::HotAdd) {
      steps.push_back(retried_step(fmt::format("leftover zram hot_remove zram{}", z.id()), [&] { return z.hot_remove(); }, retry));
      if (steps.back().err != 0) return stop(failed(steps.back()));
    }
    harness::kernel::remove_zram_owner(fs);
  } catch (const harness::kernel::Error& e) {
    steps.push_back({"leftover backend cleanup", 0, EIO, e.what()});
    return stop(e.what());
  }
  return out;
}

}  // namespace harness::case_
