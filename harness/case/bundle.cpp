// Case bundle writer (schema: results/schema.sql; store: results::Db).
#include "harness/case/bundle.hpp"

#include <filesystem>

#include "harness/build_info.hpp"
#include "results/db.hpp"

namespace harness::case_ {

namespace {
std::optional<std::string> json_or_null(const nlohmann::json& j) {
  if (j.is_null()) return std::nullopt;
  return j.dump();
}

// write_bundle's steps: one INSERT per table, in the order of results/schema.sql. The large
// tables are written under the case's key (`key`, the cases row's rowid), directly into their
// rows tables (results/schema.sql, version 5); the views of their plain names add the case id.

/// The one `cases` row.
void insert_case_row(results::Db& db, const CaseBundle& b) {
  results::Stmt s(db,
                  "INSERT INTO cases(case_id, campaign, vm, regime, repeat, triplet_id, configuration, "
                  "dose_bytes, attempt, status, error, accelerator, kernel_release, source_commit, "
                  "page_size_bytes, started_unix_ns, ended_unix_ns, spec_json, environment_json, "
                  "qualification_json, outcome_json, source_dirty) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  s.bind_all(b.case_id, b.campaign, b.vm, b.regime, b.repeat, b.triplet_id, b.configuration, b.dose_bytes,
             b.attempt, b.status, b.error, b.accelerator, b.kernel_release, b.source_commit, b.page_size_bytes,
             b.started_unix_ns, b.ended_unix_ns, b.spec_json, b.environment_json, b.qualification_json,
             b.outcome_json, b.source_dirty)
      .run();
}

/// One `phases` row per phase boundary pair.
void insert_phase_rows(results::Db& db, const CaseBundle& b) {
  results::Stmt s(db, "INSERT INTO phases(case_id, phase, start_ns, end_ns) VALUES (?,?,?,?)");
  for (const auto& p : b.phases) s.bind_all(b.case_id, p.phase, p.start_ns, p.end_ns).run();
}

/// One `canary_requests_rows` row per canary request.
void insert_request_rows(results::Db& db, std::int64_t key, const CaseBundle& b) {
  results::Stmt s(db,
                  "INSERT INTO canary_requests_rows(case_key, canary, seq, scheduled_ns, wake_ns, completion_ns, "
                  "minflt, majflt, nvcsw, nivcsw) VALUES (?,?,?,?,?,?,?,?,?,?)");
  for (const auto& r : b.requests)
    s.bind_all(key, r.canary, r.seq, r.scheduled_ns, r.wake_ns, r.completion_ns, r.minflt, r.majflt, r.nvcsw,
               r.nivcsw)
        .run();
}

/// One `telemetry_rows` row per sample (its 49 columns in the order of the INSERT).
void insert_telemetry_rows(results::Db& db, std::int64_t key, const CaseBundle& b) {
  results::Stmt s(
      db,
      "INSERT INTO telemetry_rows(case_key, t_ns, phase, bg_some_us, bg_full_us, fg_some_us, fg_full_us, "
      "sys_some_us, sys_full_us, bg_current_bytes, fg_current_bytes, bg_swap_current_bytes, "
      "fg_swap_current_bytes, bg_pgsteal, bg_pgscan, bg_workingset_refault_anon, "
      "bg_workingset_refault_file, bg_pgmajfault, fg_pgsteal, fg_pgscan, fg_workingset_refault_anon, "
      "fg_workingset_refault_file, fg_pgmajfault, bg_oom, bg_oom_kill, fg_oom, fg_oom_kill, pswpin, "
      "pswpout, zram_orig_data_bytes, zram_compr_data_bytes, zram_mem_used_bytes, zram_swap_used_kib, "
      "swapfile_used_kib, extra_json, read_ns, steal_us, bg_cpu_some_us, bg_cpu_full_us, bg_io_some_us, "
      "bg_io_full_us, fg_cpu_some_us, fg_cpu_full_us, fg_io_some_us, fg_io_full_us, sys_cpu_some_us, "
      "sys_cpu_full_us, sys_io_some_us, sys_io_full_us) VALUES "
      "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  for (const auto& t : b.telemetry) {
    s.bind_all(key, t.t_ns, t.phase);
    int i = 4;
    for (const auto* v : {&t.bg_some_us, &t.bg_full_us, &t.fg_some_us, &t.fg_full_us, &t.sys_some_us, &t.sys_full_us,
                          &t.bg_current_bytes, &t.fg_current_bytes, &t.bg_swap_current_bytes,
                          &t.fg_swap_current_bytes, &t.bg_pgsteal, &t.bg_pgscan, &t.bg_workingset_refault_anon,
                          &t.bg_workingset_refault_file, &t.bg_pgmajfault, &t.fg_pgsteal, &t.fg_pgscan,
                          &t.fg_workingset_refault_anon, &t.fg_workingset_refault_file, &t.fg_pgmajfault, &t.bg_oom,
                          &t.bg_oom_kill, &t.fg_oom, &t.fg_oom_kill, &t.pswpin, &t.pswpout, &t.zram_orig_data_bytes,
                          &t.zram_compr_data_bytes, &t.zram_mem_used_bytes, &t.zram_swap_used_kib,
                          &t.swapfile_used_kib})
      s.bind(i++, *v);
    s.bind(i++, json_or_null(t.extra.empty() ? nlohmann::json() : t.extra));
    s.bind(i++, t.read_ns);
    s.bind(i++, t.steal_us);
    for (const auto* v : {&t.bg_cpu_some_us, &t.bg_cpu_full_us, &t.bg_io_some_us, &t.bg_io_full_us, &t.fg_cpu_some_us,
                          &t.fg_cpu_full_us, &t.fg_io_some_us, &t.fg_io_full_us, &t.sys_cpu_some_us,
                          &t.sys_cpu_full_us, &t.sys_io_some_us, &t.sys_io_full_us})
      s.bind(i++, *v);
    s.run();
  }
}

/// One `controller_events_rows` row per controller event.
void insert_event_rows(results::Db& db, std::int64_t key, const CaseBundle& b) {
  results::Stmt s(db,
                  "INSERT INTO controller_events_rows(case_key, t_ns, kind, some_total_us, delta_us, counting, "
                  "consecutive, detail_json, window_ns, irregular) VALUES (?,?,?,?,?,?,?,?,?,?)");
  for (const auto& e : b.events)
    s.bind_all(key, e.t_ns, e.kind, e.some_total_us, e.delta_us, e.counting, e.consecutive, json_or_null(e.detail),
               e.window_ns, e.irregular)
        .run();
}

/// One `reclaim_actions` row per memory.reclaim write (duration_ns = end - start).
void insert_reclaim_rows(results::Db& db, const CaseBundle& b) {
  results::Stmt s(db,
                  "INSERT INTO reclaim_actions(case_id, requested_bytes, start_ns, end_ns, duration_ns, "
                  "write_errno, pgsteal_before, pgsteal_after, pgsteal_settled, pgscan_before, pgscan_after, "
                  "pgscan_settled, bg_current_before_bytes, bg_current_after_bytes, achieved_bytes, "
                  "achieved_counter, concurrent_estimate_bytes, achieved_conservative_bytes, "
                  "achieved_settled_bytes, write_cpu_us) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  for (const auto& r : b.reclaims)
    s.bind_all(b.case_id, r.requested_bytes, r.start_ns, r.end_ns, r.end_ns - r.start_ns, r.write_errno,
               r.pgsteal_before, r.pgsteal_after, r.pgsteal_settled, r.pgscan_before, r.pgscan_after,
               r.pgscan_settled, r.bg_current_before_bytes, r.bg_current_after_bytes, r.achieved_bytes,
               r.achieved_counter, r.concurrent_estimate_bytes, r.achieved_conservative_bytes,
               r.achieved_settled_bytes, r.write_cpu_us)
        .run();
}

/// The `restoration` row, when the case reached restoration.
void insert_restoration_row(results::Db& db, const CaseBundle& b) {
  if (!b.restoration) return;
  results::Stmt s(db, "INSERT INTO restoration(case_id, start_ns, end_ns, clean, detail_json) VALUES (?,?,?,?,?)");
  s.bind_all(b.case_id, b.restoration->start_ns, b.restoration->end_ns, b.restoration->clean ? 1 : 0,
             json_or_null(b.restoration->detail))
      .run();
}

/// One `artifacts` row per (name, content).
void insert_artifact_rows(results::Db& db, const CaseBundle& b) {
  results::Stmt s(db, "INSERT INTO artifacts(case_id, name, content) VALUES (?,?,?)");
  for (const auto& [name, content] : b.artifacts) s.bind_all(b.case_id, name, content).run();
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
    insert_case_row(db, b);
    const std::int64_t key = db.last_insert_rowid();
    insert_phase_rows(db, b);
    insert_request_rows(db, key, b);
    insert_telemetry_rows(db, key, b);
    insert_event_rows(db, key, b);
    insert_reclaim_rows(db, b);
    insert_restoration_row(db, b);
    insert_artifact_rows(db, b);
  });
}

}  // namespace harness::case_
