// PSI trigger predicate (rule: study, docs/DESIGN.md "Controller").
#include "harness/case/control/trigger.hpp"

#include <stdexcept>

namespace harness::case_ {

TriggerPredicate::TriggerPredicate(TriggerSpec spec) : spec_(spec) {
  if (spec_.min_increase_us <= 0 || spec_.consecutive_windows <= 0)
    throw std::invalid_argument("TriggerPredicate: min_increase_us and consecutive_windows must be > 0");
}

bool TriggerPredicate::irregular_length(std::int64_t length_ns) const {
  const std::int64_t window_ns = static_cast<std::int64_t>(spec_.window_ms) * 1'000'000;
  return length_ns * 10 < window_ns * 9 || length_ns * 10 > window_ns * 11;
}

std::optional<TriggerWindow> TriggerPredicate::feed(std::int64_t t_ns, std::int64_t read_ns,
                                                    std::int64_t some_total_us) {
  if (!prev_t_ns_) {
    prev_t_ns_ = t_ns;
    prev_read_ns_ = read_ns;
    prev_total_us_ = some_total_us;
    return std::nullopt;
  }
  if (t_ns < *prev_t_ns_) throw std::invalid_argument("TriggerPredicate::feed: t_ns went backwards");
  TriggerWindow w;
  w.t_ns = t_ns;
  w.some_total_us = some_total_us;
  w.delta_us = some_total_us - prev_total_us_;
  w.length_ns = read_ns - prev_read_ns_;
  w.irregular = irregular_length(w.length_ns);
  w.counting = !w.irregular && w.delta_us >= spec_.min_increase_us;
  consecutive_ = w.counting ? consecutive_ + 1 : 0;
  w.consecutive = consecutive_;
  ++windows_;
  if (w.irregular) ++irregular_windows_;
  // Counterfactual run, judged until the real trigger fires: only an earlier firing matters.
  w.counting_without_length_rule = w.delta_us >= spec_.min_increase_us;
  const bool was_fired = fired();
  if (!fired() && consecutive_ >= spec_.consecutive_windows) {
    w.fires = true;
    fired_at_ns_ = t_ns;
  }
  if (!was_fired) {
    consecutive_without_rule_ = w.counting_without_length_rule ? consecutive_without_rule_ + 1 : 0;
    // Same tick as the real firing is not earlier; a counterfactual firing is kept once.
    if (!earlier_ns_ && !w.fires && consecutive_without_rule_ >= spec_.consecutive_windows) earlier_ns_ = t_ns;
  }
  prev_t_ns_ = t_ns;
  prev_read_ns_ = read_ns;
  prev_total_us_ = some_total_us;
  return w;
}

void TriggerPredicate::reset_baseline() {
  prev_t_ns_.reset();
  consecutive_ = 0;
  consecutive_without_rule_ = 0;
}

}  // namespace harness::case_
