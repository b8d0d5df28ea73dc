// Case cgroups: parent/bg/fg lifecycle (docs/DESIGN.md "The case"; cgroup-v2.rst).
#include "harness/case/host/case_cgroups.hpp"

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>

#include <fmt/format.h>

#include "harness/kernel/errors.hpp"

namespace harness::case_ {

nlohmann::json StepRecord::to_json() const {
  nlohmann::json j{{"step", step}, {"duration_ns", duration_ns}, {"errno", err}, {"message", message}};
  if (retries > 0) j["retries"] = retries;
  return j;
}

nlohmann::json steps_json(const std::vector<StepRecord>& steps) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& s : steps) a.push_back(s.to_json());
  return a;
}

void must_step(const char* what, std::vector<StepRecord>& steps, StepRecord r) {
  steps.push_back(r);
  if (r.err != 0) throw std::runtime_error(fmt::format("{} step '{}' failed: {}", what, r.step, r.message));
}

CaseCgroups::CaseCgroups(const harness::kernel::Fs& fs, const CgroupsSpec& spec)
    : fs_(fs),
      spec_(spec),
      root_(harness::kernel::Cgroup::root(fs)),
      parent_(root_.child(spec.parent)),
      bg_(parent_.child("bg")),
      fg_(parent_.child("fg")) {}

namespace {
bool has_memory(const std::vector<std::string>& v) { return std::find(v.begin(), v.end(), "memory") != v.end(); }

harness::kernel::MemoryLimit limit(const std::optional<std::int64_t>& b) {
  return b ? harness::kernel::MemoryLimit::of_bytes(static_cast<std::uint64_t>(*b)) : harness::kernel::MemoryLimit::unlimited();
}
}  // namespace

void CaseCgroups::enable_root_memory(std::vector<StepRecord>& steps) const {
  if (!has_memory(root_.subtree_control()))
    must_step("cgroup setup", steps, timed_step("root subtree_control +memory", [&] { return root_.enable_controllers({"memory"}); }));
}

void CaseCgroups::create(std::vector<StepRecord>& steps) const {
  enable_root_memory(steps);
  must_step("cgroup setup", steps, timed_step("mkdir " + parent_.dir(), [&] { return parent_.create(); }));
  must_step("cgroup setup", steps, timed_step("parent subtree_control +memory", [&] { return parent_.enable_controllers({"memory"}); }));
  must_step("cgroup setup", steps, timed_step("mkdir " + bg_.dir(), [&] { return bg_.create(); }));
  must_step("cgroup setup", steps, timed_step("mkdir " + fg_.dir(), [&] { return fg_.create(); }));
  // No bg limit (a cold-memory regime): "max" is written all the same, so the step says what bg ran under.
  const std::string bg_max = spec_.bg_memory_max_bytes ? std::to_string(*spec_.bg_memory_max_bytes) : "max";
  must_step("cgroup setup", steps, timed_step("bg memory.max " + bg_max, [&] {
              return bg_.set_memory_max(limit(spec_.bg_memory_max_bytes));
            }));
  if (spec_.bg_memory_high_bytes)
    must_step("cgroup setup", steps, timed_step("bg memory.high", [&] { return bg_.set_memory_high(limit(spec_.bg_memory_high_bytes)); }));
  if (spec_.fg_memory_max_bytes)
    must_step("cgroup setup", steps, timed_step("fg memory.max", [&] { return fg_.set_memory_max(limit(spec_.fg_memory_max_bytes)); }));
  if (spec_.fg_memory_low_bytes)
    must_step("cgroup setup", steps, timed_step("fg memory.low", [&] {
                return fg_.set_memory_low(static_cast<std::uint64_t>(*spec_.fg_memory_low_bytes));
              }));
}

StepRecord CaseCgroups::kill_all(std::int64_t timeout_ns) const {
  StepRecord r;
  r.step = "cgroup.kill " + parent_.dir();
  auto t0 = harness::kernel::monotonic_ns();
  if (!parent_.exists()) {
    r.message = "absent";
    return r;
  }
  auto w = parent_.kill();
  r.err = w.err;
  r.message = w.message();
  for (;;) {
    bool populated = true;
    try {
      populated = parent_.events().populated().value_or(true);
    } catch (const harness::kernel::Error& e) {
      r.message = e.what();
    }
    if (!populated) break;
    if (harness::kernel::monotonic_ns() - t0 > timeout_ns) {
      r.err = ETIMEDOUT;
      r.message = "still populated after cgroup.kill";
      break;
    }
    struct timespec ts{0, 20'000'000};
    ::nanosleep(&ts, nullptr);
  }
  r.duration_ns = harness::kernel::monotonic_ns() - t0;
  return r;
}

void CaseCgroups::remove(std::vector<StepRecord>& steps) const {
  for (const auto* cg : {&fg_, &bg_, &parent_})
    if (cg->exists()) steps.push_back(timed_step("rmdir " + cg->dir(), [&] { return cg->remove(); }));
}

std::vector<std::string> CaseCgroups::present() const {
  std::vector<std::string> out;
  for (const auto* cg : {&fg_, &bg_, &parent_})
    if (cg->exists()) out.push_back(cg->dir());
  return out;
}

std::vector<pid_t> CaseCgroups::pids() const {
  std::vector<pid_t> out;
  for (const auto* cg : {&fg_, &bg_, &parent_}) {
    if (!cg->exists()) continue;
    try {
      for (pid_t p : cg->procs()) out.push_back(p);
    } catch (const harness::kernel::Error&) {
      // Removed between exists() and the read: nothing left in it.
    }
  }
  return out;
}

OomCounts CaseCgroups::oom_counts() const {
  OomCounts o;
  auto cast = [](std::optional<std::uint64_t> v) {
    return v ? std::optional<std::int64_t>(static_cast<std::int64_t>(*v)) : std::nullopt;
  };
  try {
    auto e = bg_.memory_events();
    o.bg_oom = cast(e.oom());
    o.bg_oom_kill = cast(e.oom_kill());
  } catch (const harness::kernel::Error&) {
    // counts stay NULL (unknown, not 0) when memory.events cannot be read; the OOM deltas are then NULL too
  }
  try {
    auto e = fg_.memory_events();
    o.fg_oom = cast(e.oom());
    o.fg_oom_kill = cast(e.oom_kill());
  } catch (const harness::kernel::Error&) {
    // counts stay NULL (unknown, not 0) when memory.events cannot be read; the OOM deltas are then NULL too
  }
  return o;
}

}  // namespace harness::case_
