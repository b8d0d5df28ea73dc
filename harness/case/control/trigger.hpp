#pragma once
// The study's PSI trigger predicate, pure (no clock, no files): fed one bg
// `memory.pressure` some-total sample per window tick, it says whether the window
// counted and whether the trigger fires.
//
// Rule (study; docs/DESIGN.md "Controller"): a window counts when bg `some total` grew by
// >= min_increase_us (1000 us) since the previous tick; `consecutive_windows` (3)
// counting windows in a row fire the trigger, once per case; a non-counting window
// (or a window that could not be measured) resets the run.
// Window length (SPEC.md "Version 2 additions"): a window is judged by its real length,
// read_ns - previous read_ns (CLOCK_MONOTONIC right after each bg memory.pressure read).
// Outside [0.9, 1.1] x window_ms (bounds inclusive) it is `irregular`: recorded, never
// counting, and it resets the run; it still closes the window (the next window starts at
// its read).
// Counterfactual (ours, reported so that the reset rule's cost is visible): beside the rule
// above, the predicate also runs the study's rule without the window-length rule (every
// window judged on its delta alone, an irregular one included) and records when that
// would have fired, when it is earlier than the real firing (or the real one never came).
#include "harness/case/spec/spec.hpp"

#include <cstdint>
#include <optional>

namespace harness::case_ {

/// One evaluated window (ends at the tick that closed it).
struct TriggerWindow {
  std::int64_t t_ns = 0;             ///< CLOCK_MONOTONIC ns of the closing tick
  std::int64_t some_total_us = 0;    ///< bg some total at the closing tick, us
  std::int64_t delta_us = 0;         ///< growth over the window, us (negative: counter went back)
  std::int64_t length_ns = 0;        ///< real length: read_ns - previous read_ns, ns
  bool irregular = false;            ///< length_ns outside [0.9, 1.1] x window: not judged
  bool counting = false;             ///< !irregular && delta_us >= min_increase_us
  int consecutive = 0;               ///< counting windows in a row, including this one
  bool fires = false;                ///< true on exactly one window per case
  /// Counterfactual without the window-length rule: delta_us >= min_increase_us, irregular or not.
  bool counting_without_length_rule = false;
};

/// Stateful predicate. Not thread-safe (the controller loop owns it).
class TriggerPredicate {
 public:
  explicit TriggerPredicate(TriggerSpec spec = {});

  /// Feeds the sample of one tick. The first sample (or the first after reset_baseline())
  /// only sets the baseline and returns nullopt; every later sample closes one window.
  /// `t_ns` must not go backwards (std::invalid_argument otherwise).
  /// `read_ns` is when the total was read (the window length is read_ns - previous read_ns).
  std::optional<TriggerWindow> feed(std::int64_t t_ns, std::int64_t read_ns, std::int64_t some_total_us);
  /// Same, with the read at the tick itself (read_ns = t_ns).
  std::optional<TriggerWindow> feed(std::int64_t t_ns, std::int64_t some_total_us) {
    return feed(t_ns, t_ns, some_total_us);
  }
  /// True when `length_ns` is outside [0.9, 1.1] x window_ms (inclusive bounds; exact integers).
  bool irregular_length(std::int64_t length_ns) const;

  /// A tick whose PSI read failed: the run of counting windows is reset and the next
  /// sample only sets a new baseline (a window must be measured to count).
  void reset_baseline();

  bool fired() const { return fired_at_ns_.has_value(); }
  /// Tick time of the firing window, CLOCK_MONOTONIC ns.
  std::optional<std::int64_t> fired_at_ns() const { return fired_at_ns_; }
  const TriggerSpec& spec() const { return spec_; }

  /// Windows closed so far whose length was irregular (they never counted and reset the run).
  std::int64_t irregular_windows() const { return irregular_windows_; }
  /// Windows closed so far (every window judged; a read failure closes none).
  std::int64_t windows() const { return windows_; }
  /// Tick time (CLOCK_MONOTONIC ns) at which the trigger would have fired without the
  /// window-length rule (irregular windows judged on their delta like any other), when that
  /// is strictly earlier than the real firing or the real firing never came; nullopt
  /// otherwise (the rule delayed nothing). Read failures reset both runs alike.
  std::optional<std::int64_t> earlier_without_length_rule_ns() const { return earlier_ns_; }

 private:
  TriggerSpec spec_;
  std::optional<std::int64_t> prev_t_ns_;
  std::int64_t prev_read_ns_ = 0;
  std::int64_t prev_total_us_ = 0;
  int consecutive_ = 0;
  std::optional<std::int64_t> fired_at_ns_;
  int consecutive_without_rule_ = 0;  ///< the counterfactual run (no window-length rule)
  std::optional<std::int64_t> earlier_ns_;
  std::int64_t irregular_windows_ = 0, windows_ = 0;
};

}  // namespace harness::case_
