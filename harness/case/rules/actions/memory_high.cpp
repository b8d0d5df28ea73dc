// Action `memory_high`: set bg memory.high to `fraction` x bg memory.current (the tick's
// sample; read from memory.current when the sample lacks it), throttling instead of
// reclaim. The write reclaims down to the new limit in the writing task (6.1
// memory_high_write), so it runs on its own thread; the tick that returns it records
// `memory_high_set` (errno, duration). The value before the first set is read once and
// written back after the schedule (`memory_high_restore`), once per arm whichever rules set
// it. Skips while its previous write is in flight, or when memory.current cannot be read.
#include "harness/case/rules/blocks.hpp"

#include "harness/kernel/errors.hpp"
#include "harness/kernel/fs.hpp"

#include <atomic>
#include <cmath>
#include <thread>

namespace harness::case_::rules {

namespace {
nlohmann::json limit_json(const harness::kernel::MemoryLimit& l) {
  return l.is_max() ? nlohmann::json("max") : nlohmann::json(*l.bytes);
}

class MemoryHigh final : public RuleAction {
 public:
  explicit MemoryHigh(const nlohmann::json& p) : fraction_(p.at("fraction").get<double>()) {}
  ~MemoryHigh() override {
    if (thread_.joinable()) thread_.join();
  }

  Acted act(int rule, const TickInput& tick, ActionContext& ctx, Shared& shared, std::vector<ControllerEvent>&) override {
    Acted a;
    a.detail["fraction"] = fraction_;
    if (thread_.joinable()) return skip(a, "the previous memory.high write is still in flight");
    std::optional<std::int64_t> current = tick.sample.bg_current_bytes;
    a.detail["current_from"] = "sample";
    if (!current) {
      a.detail["current_from"] = "memory.current";
      try {
        current = static_cast<std::int64_t>(ctx.bg.memory_current_bytes());
      } catch (const harness::kernel::Error& e) {
        a.detail["current_error"] = e.what();
      }
    }
    a.detail["memory_current_bytes"] = current ? nlohmann::json(*current) : nlohmann::json();
    if (!current) return skip(a, "bg memory.current not read");
    if (!original_read_) remember_original(ctx, shared, a.detail);
    const auto high = static_cast<std::uint64_t>(std::floor(fraction_ * static_cast<double>(*current)));
    a.detail["memory_high_bytes"] = high;
    bg_.emplace(ctx.bg);
    rule_ = rule;
    done_.store(false, std::memory_order_release);
    thread_ = std::thread([this, high] {
      set_.start_ns = harness::kernel::monotonic_ns();
      set_.result = bg_->set_memory_high(harness::kernel::MemoryLimit::of_bytes(high));
      set_.end_ns = harness::kernel::monotonic_ns();
      set_.bytes = high;
      done_.store(true, std::memory_order_release);
    });
    return a;
  }

  void on_tick(ActionContext&, Shared&, std::vector<ControllerEvent>& events) override {
    if (thread_.joinable() && done_.load(std::memory_order_acquire)) record_set(events);
  }

  void finish(ActionContext&, Shared&, CaseBundle& bundle, CaseOutcome&) override {
    if (thread_.joinable()) record_set(bundle.events);
  }

 private:
  struct SetRecord {
    std::int64_t start_ns = 0, end_ns = 0;
    std::uint64_t bytes = 0;
    harness::kernel::WriteResult result;
  };

  static Acted skip(Acted a, std::string why) {
    a.action = "skip";
    a.reason = std::move(why);
    return a;
  }

  /// The first memory_high of the arm reads the value to restore and registers the restore.
  void remember_original(ActionContext& ctx, Shared& shared, nlohmann::json& detail) {
    original_read_ = true;
    if (shared.memory_high_original) return;  // another rule read it before its own set
    try {
      shared.memory_high_original = ctx.bg.memory_high();
    } catch (const harness::kernel::Error& e) {
      detail["old_error"] = e.what();  // nothing to restore to: left to restoration
      return;
    }
    detail["old_memory_high"] = limit_json(*shared.memory_high_original);
    const harness::kernel::Cgroup bg = ctx.bg;
    const harness::kernel::MemoryLimit old = *shared.memory_high_original;
    shared.at_end.push_back([bg, old](CaseBundle& bundle) {
      // Raising the limit back reclaims nothing: written on this thread, after the workloads.
      const std::int64_t start = harness::kernel::monotonic_ns();
      const auto r = bg.set_memory_high(old);
      bundle.events.push_back({harness::kernel::monotonic_ns(), "memory_high_restore", std::nullopt, std::nullopt, std::nullopt,
                               std::nullopt,
                               nlohmann::json{{"policy", "rules"}, {"memory_high", limit_json(old)}, {"start_ns", start},
                                              {"errno", r.err}, {"error", r.ok() ? "" : r.message()}}});
    });
  }

  void record_set(std::vector<ControllerEvent>& events) {
    thread_.join();
    events.push_back({set_.end_ns, "memory_high_set", std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                      nlohmann::json{{"policy", "rules"}, {"rule", rule_}, {"memory_high_bytes", set_.bytes},
                                     {"start_ns", set_.start_ns}, {"end_ns", set_.end_ns},
                                     {"duration_ns", set_.end_ns - set_.start_ns}, {"errno", set_.result.err},
                                     {"error", set_.result.ok() ? "" : set_.result.message()}}});
  }

  double fraction_;
  bool original_read_ = false;
  int rule_ = 0;
  std::optional<harness::kernel::Cgroup> bg_;
  std::thread thread_;
  std::atomic<bool> done_{true};
  SetRecord set_;  ///< written by the thread, read after done_ (acquire) or join
};
}  // namespace

RuleActionInfo action_memory_high() {
  RuleActionInfo a;
  a.name = "memory_high";
  a.summary = "set bg memory.high to a fraction of bg memory.current (throttling; restored after the schedule)";
  a.params = {param_def("fraction", ParamKind::Number, "ratio", nullptr, 0.01, 1,
                          "new memory.high as a share of bg memory.current at the tick")};
  a.check = [](const nlohmann::json& p) { return p.contains("fraction") ? std::string() : "needs fraction"; };
  a.make = [](const nlohmann::json& p) { return std::make_unique<MemoryHigh>(p); };
  return a;
}

}  // namespace harness::case_::rules
