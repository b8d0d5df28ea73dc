#pragma once
// controller_events (results/schema.sql; stored under the case's key in controller_events_rows,
// version 5): the PSI trigger's 1 s windows and every trigger, would_trigger, backend_on,
// reclaim_start, reclaim_end and error event of a case, CLOCK_MONOTONIC ns of the guest.
//
// Errors: DbError on any SQLite failure.
#include "results/db.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace results {

/// One controller event.
struct ControllerEventRow {
  std::int64_t t_ns = 0;
  std::string kind;  ///< window | trigger | would_trigger | backend_on | reclaim_start | reclaim_end | error
  std::optional<std::int64_t> some_total_us;  ///< bg memory.pressure some total at this tick, us
  std::optional<std::int64_t> delta_us;       ///< its increase over the window, us
  std::optional<std::int64_t> counting;       ///< 1 when delta_us reached the threshold
  std::optional<std::int64_t> consecutive;    ///< counting windows in a row, after this one
  std::optional<std::string> detail_json;
  std::optional<std::int64_t> window_ns;  ///< the window's real length, ns
  std::optional<std::int64_t> irregular;  ///< 1 when window_ns is outside [0.9, 1.1] x window
};

/// The t_ns of `case_id`'s first event of any kind in `kinds`; nullopt when it has none.
std::optional<std::int64_t> first_event_ns(Db& db, const std::string& case_id, const std::vector<std::string>& kinds);

/// How many events of one kind a case has and the t_ns of its first (CLOCK_MONOTONIC ns).
struct EventKindSummary {
  std::string kind;
  std::int64_t count = 0;
  std::int64_t first_ns = 0;
};
/// One summary per kind of `kinds` that `case_id` has events of (a kind without events is left
/// out), in no particular order.
std::vector<EventKindSummary> event_kind_summaries(Db& db, const std::string& case_id,
                                                   const std::vector<std::string>& kinds);

/// `case_id`'s events of kind `kind` by t_ns: t_ns, kind and detail_json (the other members unset).
std::vector<ControllerEventRow> events_of_kind(Db& db, const std::string& case_id, const std::string& kind);

/// `case_id`'s events of every kind but `kind` by t_ns: t_ns and kind (the other members unset).
std::vector<ControllerEventRow> events_except_kind(Db& db, const std::string& case_id, const std::string& kind);

/// Events of `case_id` of kind `kind`.
std::int64_t count_events(Db& db, const std::string& case_id, const std::string& kind);

/// The judged windows of a case (rows of kind window with `irregular` recorded) and the irregular
/// ones among them.
struct WindowCounts {
  std::int64_t windows = 0, irregular = 0;
};
/// nullopt when the file predates the column irregular or the case has no such window.
std::optional<WindowCounts> window_counts(Db& db, const std::string& case_id);

/// Inserts the events of the case whose key is `case_key`, one statement prepared for all.
class ControllerEventWriter {
 public:
  ControllerEventWriter(Db& db, std::int64_t case_key);
  void write(const ControllerEventRow& e);

 private:
  Stmt insert_;
  std::int64_t key_;
};

}  // namespace results
