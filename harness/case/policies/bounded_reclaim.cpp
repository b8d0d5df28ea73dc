// bounded-reclaim (study): zram swapped on before the case; when the trigger fires, one
// write of the dose to bg memory.reclaim (reclaim_action.hpp: on its own thread, because
// the write blocks and telemetry must keep ticking). Its record (reclaim_record.hpp) is
// the `reclaim_end` event, the reclaim_actions row and outcome_json.reclaim.
// Settings rule (settings_check): dose_mib below cgroups.bg_memory_max_mib, the study's rule
// for its dose (case/SPEC.md: 0 < dose_bytes < bg_memory_max_bytes), for a declared arm too.
#include "harness/case/control/policy.hpp"

#include "harness/case/control/reclaim_action.hpp"
#include "harness/kernel/fs.hpp"
#include "harness/kernel/size.hpp"

#include <cmath>

namespace harness::case_ {

namespace {
class BoundedReclaim final : public Policy {
 public:
  explicit BoundedReclaim(std::int64_t dose_bytes) : dose_(dose_bytes) {}

  ZramAtStart zram_at_start() const override { return ZramAtStart::On; }

  void on_trigger(std::int64_t t_ns, ActionContext& ctx, std::vector<ControllerEvent>& events) override {
    const std::int64_t dose = dose_;
    events.push_back({harness::kernel::monotonic_ns(), "reclaim_start", std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                      nlohmann::json{{"trigger_t_ns", t_ns}, {"requested_bytes", dose}}});
    reclaim_.emplace(ctx.bg, ctx.reclaim_settle_ns);
    // Concurrent limit reclaim: bg pgsteal over the 3 windows up to this tick (its sample
    // is already the last one).
    reclaim_->start(dose, pgsteal_rate_before(ctx.telemetry, 3));
  }

  void finish(ActionContext& ctx, CaseBundle& bundle, CaseOutcome& outcome) override {
    if (!reclaim_) return;
    const auto rec = reclaim_->join();
    if (!rec) return;
    const std::int64_t page = ctx.page_size_bytes;
    bundle.events.push_back({rec->end_ns, "reclaim_end", std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                             rec->to_json(page)});
    ReclaimRow row;
    static_cast<ReclaimReadings&>(row) = *rec;
    row.achieved_bytes = rec->achieved_bytes(page);
    row.achieved_counter = rec->counter;
    row.concurrent_estimate_bytes = rec->concurrent_estimate_bytes(page);
    row.achieved_conservative_bytes = rec->achieved_conservative_bytes(page);
    row.achieved_settled_bytes = rec->achieved_settled_bytes(page);
    if (rec->write_cpu_ns) row.write_cpu_us = *rec->write_cpu_ns / 1000;
    bundle.reclaims.push_back(row);
    outcome.reclaim = ReclaimOutcome{*rec, page};
  }

 private:
  std::int64_t dose_;
  std::optional<ReclaimAction> reclaim_;
};
}  // namespace

PolicyInfo policy_bounded_reclaim() {
  PolicyInfo p;
  p.name = "bounded-reclaim";
  p.summary = "zram swapped on before the case; one write of the dose to bg memory.reclaim when the PSI trigger fires";
  p.source = "study: the bounded-reclaim configuration (dose chosen by the pilot rule: 96 MiB)";
  p.study_position = 3;
  p.params = {param_def("dose_mib", ParamKind::Number, "MiB", nullptr, 1.0 / 1024 /* 1 KiB */, std::nullopt,
                        "memory.reclaim request, MiB (study: 96, chosen by the pilot rule); the study arm takes the "
                        "campaign's dose")};
  p.settings_check = [](const nlohmann::json& j, const ArmSettings& s) {
    return above_bg_limit("dose_mib", j.at("dose_mib").get<double>(), s, /*or_equal=*/true);
  };
  p.make = [](const nlohmann::json& params) {
    return std::make_unique<BoundedReclaim>(std::llround(params.at("dose_mib").get<double>() * harness::kernel::kMiB));
  };
  return p;
}

}  // namespace harness::case_
