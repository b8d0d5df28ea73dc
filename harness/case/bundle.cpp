// Case bundle writer (schema: results/schema.sql; store: results::Db).
#include "harness/case/bundle.hpp"

#include <filesystem>

#include "results/db.hpp"

namespace hcase {

namespace {
std::optional<std::string> json_or_null(const nlohmann::json& j) {
  if (j.is_null()) return std::nullopt;
  return j.dump();
}
}  // namespace

void write_bundle(const std::string& path, const CaseBundle& b) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(path + suffix);
  results::Db db(path, results::Db::Mode::Create);
  db.transaction([&] {
    {
      results::Stmt s(db,
                      "INSERT INTO cases(case_id, campaign, vm, regime, repeat, triplet_id, configuration, "
                      "dose_bytes, attempt, status, error, accelerator, kernel_release, source_commit, "
                      "page_size_bytes, started_unix_ns, ended_unix_ns, spec_json, environment_json, "
                      "qualification_json, outcome_json, source_dirty) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
      s.bind(1, b.case_id).bind(2, b.campaign).bind(3, b.vm).bind(4, b.regime).bind(5, b.repeat);
      s.bind(6, b.triplet_id).bind(7, b.configuration).bind(8, b.dose_bytes).bind(9, b.attempt);
      s.bind(10, b.status).bind(11, b.error).bind(12, b.accelerator).bind(13, b.kernel_release);
      s.bind(14, b.source_commit).bind(15, b.page_size_bytes).bind(16, b.started_unix_ns);
      s.bind(17, b.ended_unix_ns).bind(18, b.spec_json).bind(19, b.environment_json);
      s.bind(20, b.qualification_json).bind(21, b.outcome_json).bind(22, b.source_dirty);
      s.run();
    }
    {
      results::Stmt s(db, "INSERT INTO phases(case_id, phase, start_ns, end_ns) VALUES (?,?,?,?)");
      for (const auto& p : b.phases) {
        s.bind(1, b.case_id).bind(2, p.phase).bind(3, p.start_ns).bind(4, p.end_ns);
        s.run();
      }
    }
    {
      results::Stmt s(db,
                      "INSERT INTO canary_requests(case_id, canary, seq, scheduled_ns, wake_ns, completion_ns, "
                      "minflt, majflt, nvcsw, nivcsw) VALUES (?,?,?,?,?,?,?,?,?,?)");
      for (const auto& r : b.requests) {
        s.bind(1, b.case_id).bind(2, r.canary).bind(3, r.seq).bind(4, r.scheduled_ns).bind(5, r.wake_ns);
        s.bind(6, r.completion_ns).bind(7, r.minflt).bind(8, r.majflt).bind(9, r.nvcsw).bind(10, r.nivcsw);
        s.run();
      }
    }
    {
      results::Stmt s(
          db,
          "INSERT INTO telemetry(case_id, t_ns, phase, bg_some_us, bg_full_us, fg_some_us, fg_full_us, "
          "sys_some_us, sys_full_us, bg_current_bytes, fg_current_bytes, bg_swap_current_bytes, "
          "fg_swap_current_bytes, bg_pgsteal, bg_pgscan, bg_workingset_refault_anon, "
          "bg_workingset_refault_file, bg_pgmajfault, fg_pgsteal, fg_pgscan, fg_workingset_refault_anon, "
          "fg_workingset_refault_file, fg_pgmajfault, bg_oom, bg_oom_kill, fg_oom, fg_oom_kill, pswpin, "
          "pswpout, zram_orig_data_bytes, zram_compr_data_bytes, zram_mem_used_bytes, zram_swap_used_kib, "
          "swapfile_used_kib, extra_json, read_ns, steal_us) VALUES "
          "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
      for (const auto& t : b.telemetry) {
        int i = 1;
        s.bind(1, b.case_id).bind(2, t.t_ns).bind(3, t.phase);
        i = 4;
        for (const auto* v : {&t.bg_some_us, &t.bg_full_us, &t.fg_some_us, &t.fg_full_us, &t.sys_some_us,
                              &t.sys_full_us, &t.bg_current_bytes, &t.fg_current_bytes, &t.bg_swap_current_bytes,
                              &t.fg_swap_current_bytes, &t.bg_pgsteal, &t.bg_pgscan,
                              &t.bg_workingset_refault_anon, &t.bg_workingset_refault_file, &t.bg_pgmajfault,
                              &t.fg_pgsteal, &t.fg_pgscan, &t.fg_workingset_refault_anon,
                              &t.fg_workingset_refault_file, &t.fg_pgmajfault, &t.bg_oom, &t.bg_oom_kill,
                              &t.fg_oom, &t.fg_oom_kill, &t.pswpin, &t.pswpout, &t.zram_orig_data_bytes,
                              &t.zram_compr_data_bytes, &t.zram_mem_used_bytes, &t.zram_swap_used_kib,
                              &t.swapfile_used_kib})
          s.bind(i++, *v);
        s.bind(i++, json_or_null(t.extra.empty() ? nlohmann::json() : t.extra));
        s.bind(i++, t.read_ns);
        s.bind(i++, t.steal_us);
        s.run();
      }
    }
    {
      results::Stmt s(db,
                      "INSERT INTO controller_events(case_id, t_ns, kind, some_total_us, delta_us, counting, "
                      "consecutive, detail_json, window_ns, irregular) VALUES (?,?,?,?,?,?,?,?,?,?)");
      for (const auto& e : b.events) {
        s.bind(1, b.case_id).bind(2, e.t_ns).bind(3, e.kind).bind(4, e.some_total_us).bind(5, e.delta_us);
        s.bind(6, e.counting).bind(7, e.consecutive).bind(8, json_or_null(e.detail));
        s.bind(9, e.window_ns).bind(10, e.irregular);
        s.run();
      }
    }
    {
      results::Stmt s(db,
                      "INSERT INTO reclaim_actions(case_id, requested_bytes, start_ns, end_ns, duration_ns, "
                      "write_errno, pgsteal_before, pgsteal_after, pgsteal_settled, pgscan_before, pgscan_after, "
                      "pgscan_settled, bg_current_before_bytes, bg_current_after_bytes, achieved_bytes, "
                      "achieved_counter, concurrent_estimate_bytes, achieved_conservative_bytes, "
                      "achieved_settled_bytes) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
      for (const auto& r : b.reclaims) {
        s.bind(1, b.case_id).bind(2, r.requested_bytes).bind(3, r.start_ns).bind(4, r.end_ns);
        s.bind(5, r.end_ns - r.start_ns).bind(6, r.write_errno).bind(7, r.pgsteal_before);
        s.bind(8, r.pgsteal_after).bind(9, r.pgsteal_settled).bind(10, r.pgscan_before);
        s.bind(11, r.pgscan_after).bind(12, r.pgscan_settled).bind(13, r.bg_current_before_bytes);
        s.bind(14, r.bg_current_after_bytes).bind(15, r.achieved_bytes).bind(16, r.achieved_counter);
        s.bind(17, r.concurrent_estimate_bytes).bind(18, r.achieved_conservative_bytes);
        s.bind(19, r.achieved_settled_bytes);
        s.run();
      }
    }
    if (b.restoration) {
      results::Stmt s(db, "INSERT INTO restoration(case_id, start_ns, end_ns, clean, detail_json) VALUES (?,?,?,?,?)");
      s.bind(1, b.case_id).bind(2, b.restoration->start_ns).bind(3, b.restoration->end_ns);
      s.bind(4, b.restoration->clean ? 1 : 0).bind(5, json_or_null(b.restoration->detail));
      s.run();
    }
    {
      results::Stmt s(db, "INSERT INTO artifacts(case_id, name, content) VALUES (?,?,?)");
      for (const auto& [name, content] : b.artifacts) {
        s.bind(1, b.case_id).bind(2, name).bind(3, content);
        s.run();
      }
    }
  });
}

}  // namespace hcase
