// telemetry (see telemetry.hpp).
#include "results/store/telemetry.hpp"

#include "results/store/columns.hpp"

#include <stdexcept>

namespace results {
namespace {

using store_columns::Column;
using store_columns::Presence;
using R = TelemetryRow;

/// telemetry's columns in schema.sql order (the view's; telemetry_rows has case_key first).
const std::vector<Column<R>>& telemetry_columns() {
  constexpr auto v4 = Presence::added;
  constexpr auto v8 = Presence::added;
  static const std::vector<Column<R>> cols = {
      {"t_ns", &R::t_ns}, {"phase", &R::phase},
      {"bg_some_us", &R::bg_some_us}, {"bg_full_us", &R::bg_full_us},
      {"fg_some_us", &R::fg_some_us}, {"fg_full_us", &R::fg_full_us},
      {"sys_some_us", &R::sys_some_us}, {"sys_full_us", &R::sys_full_us},
      {"bg_current_bytes", &R::bg_current_bytes}, {"fg_current_bytes", &R::fg_current_bytes},
      {"bg_swap_current_bytes", &R::bg_swap_current_bytes}, {"fg_swap_current_bytes", &R::fg_swap_current_bytes},
      {"bg_pgsteal", &R::bg_pgsteal}, {"bg_pgscan", &R::bg_pgscan},
      {"bg_workingset_refault_anon", &R::bg_workingset_refault_anon},
      {"bg_workingset_refault_file", &R::bg_workingset_refault_file}, {"bg_pgmajfault", &R::bg_pgmajfault},
      {"fg_pgsteal", &R::fg_pgsteal}, {"fg_pgscan", &R::fg_pgscan},
      {"fg_workingset_refault_anon", &R::fg_workingset_refault_anon},
      {"fg_workingset_refault_file", &R::fg_workingset_refault_file}, {"fg_pgmajfault", &R::fg_pgmajfault},
      {"bg_oom", &R::bg_oom}, {"bg_oom_kill", &R::bg_oom_kill}, {"fg_oom", &R::fg_oom}, {"fg_oom_kill", &R::fg_oom_kill},
      {"pswpin", &R::pswpin}, {"pswpout", &R::pswpout},
      {"zram_orig_data_bytes", &R::zram_orig_data_bytes}, {"zram_compr_data_bytes", &R::zram_compr_data_bytes},
      {"zram_mem_used_bytes", &R::zram_mem_used_bytes}, {"zram_swap_used_kib", &R::zram_swap_used_kib},
      {"swapfile_used_kib", &R::swapfile_used_kib}, {"extra_json", &R::extra_json},
      {"read_ns", &R::read_ns}, {"steal_us", &R::steal_us},
      {"bg_cpu_some_us", &R::bg_cpu_some_us, v4}, {"bg_cpu_full_us", &R::bg_cpu_full_us, v4},
      {"bg_io_some_us", &R::bg_io_some_us, v4}, {"bg_io_full_us", &R::bg_io_full_us, v4},
      {"fg_cpu_some_us", &R::fg_cpu_some_us, v4}, {"fg_cpu_full_us", &R::fg_cpu_full_us, v4},
      {"fg_io_some_us", &R::fg_io_some_us, v4}, {"fg_io_full_us", &R::fg_io_full_us, v4},
      {"sys_cpu_some_us", &R::sys_cpu_some_us, v4}, {"sys_cpu_full_us", &R::sys_cpu_full_us, v4},
      {"sys_io_some_us", &R::sys_io_some_us, v4}, {"sys_io_full_us", &R::sys_io_full_us, v4},
      {"kswapd_cpu_us", &R::kswapd_cpu_us, v8}, {"bg_cpu_usage_us", &R::bg_cpu_usage_us, v8},
      {"bg_cpu_system_us", &R::bg_cpu_system_us, v8}, {"fg_cpu_usage_us", &R::fg_cpu_usage_us, v8},
      {"fg_cpu_system_us", &R::fg_cpu_system_us, v8}};
  return cols;
}

}  // namespace

void for_each_telemetry(Db& db, const std::string& case_id, const std::optional<TimeWindow>& window,
                        const std::function<void(const TelemetryRow&)>& row) {
  Stmt q(db, "SELECT " + store_columns::select_list(db, "telemetry", telemetry_columns()) +
                 " FROM telemetry WHERE case_id = ?1" + (window ? " AND t_ns >= ?2 AND t_ns <= ?3" : "") +
                 " ORDER BY t_ns");
  q.bind(1, case_id);
  if (window) q.bind(2, window->from_ns).bind(3, window->to_ns);
  TelemetryRow r;
  while (q.step()) {
    store_columns::read_row(q, 0, telemetry_columns(), r);
    row(r);
  }
}

TelemetryRow::Opt telemetry_value(const TelemetryRow& row, const std::string& column) {
  for (const auto& c : telemetry_columns())
    if (column == c.name)
      if (const auto* m = std::get_if<TelemetryRow::Opt R::*>(&c.member)) return row.**m;
  throw std::invalid_argument("telemetry has no integer column " + column);
}

std::int64_t cases_with_oom_kills(Db& db) {
  Stmt q(db, "SELECT count(DISTINCT case_id) FROM telemetry WHERE coalesce(bg_oom_kill,0) + coalesce(fg_oom_kill,0) > 0");
  q.step();
  return q.int64(0);
}

OomKills oom_kills(Db& db, const std::string& case_id) {
  Stmt q(db, "SELECT MAX(COALESCE(bg_oom_kill,0)+COALESCE(fg_oom_kill,0)) - "
             "MIN(COALESCE(bg_oom_kill,0)+COALESCE(fg_oom_kill,0)), COUNT(*) FROM telemetry "
             "WHERE case_id = ?1");
  q.bind(1, case_id);
  if (!q.step()) return {};
  return {q.opt_int64(0), q.int64(1)};
}

FgOomKills fg_oom_kills(Db& db, const std::string& case_id) {
  Stmt q(db, "SELECT count(fg_oom_kill), max(fg_oom_kill) FROM telemetry WHERE case_id = ?1");
  q.bind(1, case_id);
  q.step();
  return {q.int64(0), q.opt_int64(1)};
}

TelemetryWriter::TelemetryWriter(Db& db, std::int64_t case_key)
    : insert_(db, store_columns::insert_sql("telemetry_rows", {"case_key"}, telemetry_columns())), key_(case_key) {}

void TelemetryWriter::write(const TelemetryRow& r) {
  insert_.bind(1, key_);
  store_columns::bind_row(insert_, 2, telemetry_columns(), r);
  insert_.run();
}

}  // namespace results
