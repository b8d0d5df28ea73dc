// Case bundle writer (schema: results/schema.sql; written through the store, results/store/).
#include "harness/case/run/bundle.hpp"

#include <filesystem>

#include "harness/build_info.hpp"
#include "results/db.hpp"
#include "results/store/cases.hpp"
#include "results/store/controller_events.hpp"
#include "results/store/reclaim_actions.hpp"
#include "results/store/restoration.hpp"
#include "results/store/artifacts.hpp"
#include "results/store/telemetry.hpp"

namespace harness::case_ {

namespace {
std::optional<std::string> json_or_null(const nlohmann::json& j) {
  if (j.is_null()) return std::nullopt;
  return j.dump();
}

// write_bundle's steps: one writer of the store per table, in the order of results/schema.sql.
// The large tables are written under the case's key (`key`, from the cases row), directly into
// their rows tables (results/schema.sql, version 5).

/// The one `cases` row; returns the case's key.
std::int64_t insert_case_row(results::Db& db, const CaseBundle& b) {
  results::CaseRow c;
  c.case_id = b.case_id;
  c.campaign = b.campaign;
  c.vm = b.vm;
  c.regime = b.regime;
  c.repeat = b.repeat;
  c.triplet_id = b.triplet_id;
  c.configuration = b.configuration;
  c.dose_bytes = b.dose_bytes;
  c.attempt = b.attempt;
  c.status = b.status;
  c.error = b.error;
  c.accelerator = b.accelerator;
  c.kernel_release = b.kernel_release;
  c.source_commit = b.source_commit;
  c.source_dirty = b.source_dirty;
  c.page_size_bytes = b.page_size_bytes;
  c.started_unix_ns = b.started_unix_ns;
  c.ended_unix_ns = b.ended_unix_ns;
  c.spec_json = b.spec_json;
  c.environment_json = b.environment_json;
  c.qualification_json = b.qualification_json;
  c.outcome_json = b.outcome_json;
  return results::insert_case(db, c);
}

/// One `telemetry_rows` row per sample: every column of the sample.
void insert_telemetry_rows(results::Db& db, std::int64_t key, const CaseBundle& b) {
  results::TelemetryWriter w(db, key);
  for (const auto& t : b.telemetry) {
    const results::TelemetryRow r{.t_ns = t.t_ns, .phase = t.phase, .bg_some_us = t.bg_some_us,
        .bg_full_us = t.bg_full_us, .fg_some_us = t.fg_some_us, .fg_full_us = t.fg_full_us,
        .sys_some_us = t.sys_some_us, .sys_full_us = t.sys_full_us, .bg_current_bytes = t.bg_current_bytes,
        .fg_current_bytes = t.fg_current_bytes, .bg_swap_current_bytes = t.bg_swap_current_bytes,
        .fg_swap_current_bytes = t.fg_swap_current_bytes, .bg_pgsteal = t.bg_pgsteal, .bg_pgscan = t.bg_pgscan,
        .bg_workingset_refault_anon = t.bg_workingset_refault_anon,
        .bg_workingset_refault_file = t.bg_workingset_refault_file, .bg_pgmajfault = t.bg_pgmajfault,
        .fg_pgsteal = t.fg_pgsteal, .fg_pgscan = t.fg_pgscan,
        .fg_workingset_refault_anon = t.fg_workingset_refault_anon,
        .fg_workingset_refault_file = t.fg_workingset_refault_file, .fg_pgmajfault = t.fg_pgmajfault,
        .bg_oom = t.bg_oom, .bg_oom_kill = t.bg_oom_kill, .fg_oom = t.fg_oom, .fg_oom_kill = t.fg_oom_kill,
        .pswpin = t.pswpin, .pswpout = t.pswpout, .zram_orig_data_bytes = t.zram_orig_data_bytes,
        .zram_compr_data_bytes = t.zram_compr_data_bytes, .zram_mem_used_bytes = t.zram_mem_used_bytes,
        .zram_swap_used_kib = t.zram_swap_used_kib, .swapfile_used_kib = t.swapfile_used_kib,
        .extra_json = json_or_null(t.extra.empty() ? nlohmann::json() : t.extra), .read_ns = t.read_ns,
        .steal_us = t.steal_us, .bg_cpu_some_us = t.bg_cpu_some_us, .bg_cpu_full_us = t.bg_cpu_full_us,
        .bg_io_some_us = t.bg_io_some_us, .bg_io_full_us = t.bg_io_full_us, .fg_cpu_some_us = t.fg_cpu_some_us,
        .fg_cpu_full_us = t.fg_cpu_full_us, .fg_io_some_us = t.fg_io_some_us, .fg_io_full_us = t.fg_io_full_us,
        .sys_cpu_some_us = t.sys_cpu_some_us, .sys_cpu_full_us = t.sys_cpu_full_us,
        .sys_io_some_us = t.sys_io_some_us, .sys_io_full_us = t.sys_io_full_us, .kswapd_cpu_us = t.kswapd_cpu_us,
        .bg_cpu_usage_us = t.bg_cpu_usage_us, .bg_cpu_system_us = t.bg_cpu_system_us,
        .fg_cpu_usage_us = t.fg_cpu_usage_us, .fg_cpu_system_us = t.fg_cpu_system_us};
    w.write(r);
  }
}

/// One `controller_events_rows` row per controller event.
void insert_event_rows(results::Db& db, std::int64_t key, const CaseBundle& b) {
  results::ControllerEventWriter w(db, key);
  const auto opt = [](std::optional<int> v) { return v ? std::optional<std::int64_t>(*v) : std::nullopt; };
  for (const auto& e : b.events)
    w.write({.t_ns = e.t_ns, .kind = e.kind, .some_total_us = e.some_total_us, .delta_us = e.delta_us,
             .counting = opt(e.counting), .consecutive = opt(e.consecutive), .detail_json = json_or_null(e.detail),
             .window_ns = e.window_ns, .irregular = opt(e.irregular)});
}

/// One `reclaim_actions` row per memory.reclaim write (duration_ns = end - start).
void insert_reclaim_rows(results::Db& db, const CaseBundle& b) {
  std::vector<results::ReclaimActionRow> rows;
  for (const auto& r : b.reclaims)
    rows.push_back({.requested_bytes = r.requested_bytes, .start_ns = r.start_ns, .end_ns = r.end_ns,
                    .duration_ns = r.end_ns - r.start_ns, .write_errno = r.write_errno,
                    .pgsteal_before = r.pgsteal_before, .pgsteal_after = r.pgsteal_after,
                    .pgsteal_settled = r.pgsteal_settled, .pgscan_before = r.pgscan_before,
                    .pgscan_after = r.pgscan_after, .pgscan_settled = r.pgscan_settled,
                    .bg_current_before_bytes = r.bg_current_before_bytes,
                    .bg_current_after_bytes = r.bg_current_after_bytes, .achieved_bytes = r.achieved_bytes,
                    .achieved_counter = r.achieved_counter, .concurrent_estimate_bytes = r.concurrent_estimate_bytes,
                    .achieved_conservative_bytes = r.achieved_conservative_bytes,
                    .achieved_settled_bytes = r.achieved_settled_bytes, .write_cpu_us = r.write_cpu_us});
  results::insert_reclaim_actions(db, b.case_id, rows);
}
}  // namespace

void fill_case_row(CaseBundle& b, const CaseSpec& spec, int attempt) {
  b.case_id = spec.case_id;
  b.campaign = spec.campaign;
  b.vm = spec.vm;
  b.regime = spec.regime;
  b.repeat = spec.repeat;
  b.triplet_id = spec.triplet_id;
  b.configuration = spec.configuration;
  b.dose_bytes = spec.dose_bytes;
  b.attempt = attempt;
  b.spec_json = spec.raw.dump();
  b.source_commit = harness::build::kSourceCommit;
  b.source_dirty = harness::build::kSourceDirty ? 1 : 0;
}

void write_bundle(const std::string& path, const CaseBundle& b) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(path + suffix);
  results::Db db(path, results::Db::Mode::Create);
  db.transaction([&] {
    const std::int64_t key = insert_case_row(db, b);
    results::insert_phases(db, b.case_id, b.phases);
    results::CanaryRequestWriter requests(db, key);
    for (const auto& r : b.requests) requests.write(r);
    insert_telemetry_rows(db, key, b);
    insert_event_rows(db, key, b);
    insert_reclaim_rows(db, b);
    if (b.restoration)  // when the case reached restoration
      results::insert_restoration(db, b.case_id,
                                  {b.restoration->start_ns, b.restoration->end_ns, b.restoration->clean ? 1 : 0,
                                   json_or_null(b.restoration->detail)});
    results::insert_artifacts(db, b.case_id, b.artifacts);
  });
}

}  // namespace harness::case_
