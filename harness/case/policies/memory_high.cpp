// memory-high: throttling instead of reclaim. When the study's PSI trigger fires, bg
// memory.high is set to `fraction` x bg memory.current (the trigger tick's sample); the old
// memory.high is written back at finish() (restoration then removes the cgroup anyway).
// Source: seed 002 (TMO): Senpai first drove cgroup memory limits (memory.high) before
// memory.reclaim replaced them, because a limit can throttle a growing workload; this arm
// measures that older lever against the study's one reclaim write.
//
// A memory.high write below the usage makes the kernel reclaim down to it in the writing
// task (6.1 memory_high_write), so the write runs on its own thread, as memory.reclaim
// writes do; the tick only starts it and later records it. Events: `policy_decision` at the
// trigger (the inputs and the value to write, the old value), `memory_high_set` once the
// write returned (errno, duration), `memory_high_restore` at finish(). A failed write is
// data (errno in the event); the case goes on.
// Settings rule (settings_check): with a static bg memory.high (cgroups.bg_memory_high_mib),
// fraction below 1: bg then sits at that limit, and memory.high = 1 x memory.current would
// write the campaign's own limit back, no lever at all.
#include "harness/case/policy.hpp"

#include "harness/kernel/errors.hpp"
#include "harness/kernel/fs.hpp"
#include "harness/kernel/size.hpp"

#include <atomic>
#include <cmath>
#include <thread>

namespace harness::case_ {

namespace {
nlohmann::json limit_json(const harness::kernel::MemoryLimit& l) {
  return l.is_max() ? nlohmann::json("max") : nlohmann::json(*l.bytes);
}

class MemoryHigh final : public Policy {
 public:
  explicit MemoryHigh(double fraction) : fraction_(fraction) {}
  ~MemoryHigh() override {
    if (thread_.joinable()) thread_.join();
  }

  ZramAtStart zram_at_start() const override { return ZramAtStart::On; }

  void on_trigger(std::int64_t t_ns, ActionContext& ctx, std::vector<ControllerEvent>& events) override {
    nlohmann::json d{{"policy", "memory-high"}, {"trigger_t_ns", t_ns}, {"fraction", fraction_}};
    std::optional<std::int64_t> current;
    if (!ctx.telemetry.empty()) current = ctx.telemetry.back().bg_current_bytes;
    d["current_from"] = "sample";
    if (!current) {  // not in this tick's sample: read it now (one small read)
      d["current_from"] = "memory.current";
      try {
        current = static_cast<std::int64_t>(ctx.bg.memory_current_bytes());
      } catch (const harness::kernel::Error& e) {
        d["current_error"] = e.what();
      }
    }
    try {
      old_ = ctx.bg.memory_high();
      d["old_memory_high"] = limit_json(*old_);
    } catch (const harness::kernel::Error& e) {
      d["old_error"] = e.what();  // nothing to restore to: finish() leaves it to restoration
    }
    d["memory_current_bytes"] = current ? nlohmann::json(*current) : nlohmann::json();
    if (!current) {
      d["action"] = "none";
      d["reason"] = "bg memory.current not read";
    } else {
      const auto high = static_cast<std::uint64_t>(std::floor(fraction_ * static_cast<double>(*current)));
      d["action"] = "set";
      d["memory_high_bytes"] = high;
      bg_.emplace(ctx.bg);
      done_.store(false, std::memory_order_release);
      thread_ = std::thread([this, high] {
        set_.start_ns = harness::kernel::monotonic_ns();
        set_.result = bg_->set_memory_high(harness::kernel::MemoryLimit::of_bytes(high));
        set_.end_ns = harness::kernel::monotonic_ns();
        set_.bytes = high;
        done_.store(true, std::memory_order_release);
      });
    }
    events.push_back({t_ns, "policy_decision", std::nullopt, std::nullopt, std::nullopt, std::nullopt, d});
  }

  void on_tick(const TickInput&, ActionContext&, std::vector<ControllerEvent>& events) override {
    if (thread_.joinable() && done_.load(std::memory_order_acquire)) record_set(events);
  }

  void finish(ActionContext&, CaseBundle& bundle, CaseOutcome&) override {
    if (thread_.joinable()) record_set(bundle.events);
    if (!bg_ || !old_) return;
    // Raising the limit back reclaims nothing: written on this thread, after the workloads.
    const std::int64_t start = harness::kernel::monotonic_ns();
    const auto r = bg_->set_memory_high(*old_);
    bundle.events.push_back({harness::kernel::monotonic_ns(), "memory_high_restore", std::nullopt, std::nullopt, std::nullopt,
                             std::nullopt,
                             nlohmann::json{{"policy", "memory-high"}, {"memory_high", limit_json(*old_)},
                                            {"start_ns", start}, {"errno", r.err}, {"error", r.ok() ? "" : r.message()}}});
  }

 private:
  struct SetRecord {
    std::int64_t start_ns = 0, end_ns = 0;
    std::uint64_t bytes = 0;
    harness::kernel::WriteResult result;
  };

  void record_set(std::vector<ControllerEvent>& events) {
    thread_.join();
    events.push_back({set_.end_ns, "memory_high_set", std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                      nlohmann::json{{"policy", "memory-high"}, {"memory_high_bytes", set_.bytes},
                                     {"start_ns", set_.start_ns}, {"end_ns", set_.end_ns},
                                     {"duration_ns", set_.end_ns - set_.start_ns}, {"errno", set_.result.err},
                                     {"error", set_.result.ok() ? "" : set_.result.message()}}});
  }

  double fraction_;
  std::optional<harness::kernel::Cgroup> bg_;
  std::optional<harness::kernel::MemoryLimit> old_;
  std::thread thread_;
  std::atomic<bool> done_{true};
  SetRecord set_;  ///< written by the thread, read after done_ (acquire) or join
};
}  // namespace

PolicyInfo policy_memory_high() {
  PolicyInfo p;
  p.name = "memory-high";
  p.summary = "at the PSI trigger, bg memory.high = fraction x bg memory.current (throttling, not reclaim); restored at the end";
  p.source = "seed 002 (TMO): Senpai's earlier lever, cgroup memory limits (memory.high), before memory.reclaim replaced it";
  p.params = {param_def("fraction", ParamKind::Number, "ratio", 0.9, 0.01, 1,
                        "new memory.high as a share of bg memory.current at the trigger (ours: 0.9)")};
  p.settings_check = [](const nlohmann::json& j, const ArmSettings& s) -> std::optional<ParamError> {
    if (s.bg_memory_high_mib && j.at("fraction").get<double>() >= 1)
      return param_error("fraction", "must be below 1 when cgroups.bg_memory_high_mib is set (" +
                                         readable_number(*s.bg_memory_high_mib) +
                                         " MiB): bg sits at that limit, and 1 x memory.current writes it back unchanged");
    return std::nullopt;
  };
  p.make = [](const nlohmann::json& j) { return std::make_unique<MemoryHigh>(j.at("fraction").get<double>()); };
  return p;
}

}  // namespace harness::case_
