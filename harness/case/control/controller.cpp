// Controller: the trigger predicate over telemetry samples, and the once-only action.
#include "harness/case/control/controller.hpp"

namespace harness::case_ {

Controller::Controller(const TriggerSpec& trigger, std::int64_t pressure_start_ns, std::int64_t pressure_end_ns,
                       Action action, std::optional<std::string> no_action_note, TickHook tick)
    : predicate_(trigger),
      no_action_note_(std::move(no_action_note)),
      start_ns_(pressure_start_ns),
      end_ns_(pressure_end_ns),
      action_(std::move(action)),
      tick_(std::move(tick)) {}

void Controller::on_sample(const TelemetrySample& s, std::vector<ControllerEvent>& events) {
  const bool fired_before = fired_t_ns_.has_value();
  judge(s, events);
  if (tick_ && (s.phase == "pressure" || s.phase == "recovery"))
    tick_(TickInput{s, start_ns_, end_ns_, fired_t_ns_, !fired_before && fired_t_ns_.has_value()}, events);
}

void Controller::judge(const TelemetrySample& s, std::vector<ControllerEvent>& events) {
  if (s.t_ns < start_ns_ || s.t_ns > end_ns_) return;
  if (!s.bg_some_us) {
    nlohmann::json detail{{"what", "bg memory.pressure unreadable: window not measured, run reset"}};
    if (s.extra.contains("errors")) detail["errors"] = s.extra["errors"];
    events.push_back({s.t_ns, "error", std::nullopt, std::nullopt, std::nullopt, std::nullopt, detail});
    predicate_.reset_baseline();
    return;
  }
  // Window length from the reads themselves (read_ns; the tick time when not stamped).
  auto w = predicate_.feed(s.t_ns, s.read_ns.value_or(s.t_ns), *s.bg_some_us);
  if (!w) return;  // baseline tick
  events.push_back({w->t_ns, "window", w->some_total_us, w->delta_us, w->counting ? 1 : 0, w->consecutive,
                    nlohmann::json{{"length_ns", w->length_ns}, {"phase", s.phase}}, w->length_ns,
                    w->irregular ? 1 : 0});
  if (!w->fires) return;
  fired_t_ns_ = w->t_ns;
  nlohmann::json detail{{"since_pressure_start_ns", w->t_ns - start_ns_},
                        {"min_increase_us", predicate_.spec().min_increase_us},
                        {"consecutive_windows", predicate_.spec().consecutive_windows}};
  if (no_action_note_) {
    detail["note"] = *no_action_note_;
    events.push_back({w->t_ns, "would_trigger", w->some_total_us, w->delta_us, 1, w->consecutive, detail});
    return;
  }
  events.push_back({w->t_ns, "trigger", w->some_total_us, w->delta_us, 1, w->consecutive, detail});
  if (action_) action_(w->t_ns, events);
}

}  // namespace harness::case_
