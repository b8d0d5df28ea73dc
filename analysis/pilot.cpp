// Pilot dose selection (see pilot.hpp).
#include "analysis/pilot.hpp"

#include "results/db.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

namespace analysis {

PilotResult select_dose(const std::string& db_path, const PilotRule& rule) {
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  PilotResult out;
  out.rule = rule;
  std::map<std::int64_t, DoseResult> doses;
  int tcg = 0;
  {
    results::Stmt st(db, "SELECT case_id FROM cases WHERE status = 'infra_failed' AND configuration = 'bounded-reclaim'");
    while (st.step()) out.warnings.push_back(fmt::format("case {} is infra_failed: not evaluated", st.text(0)));
  }
  results::Stmt cs(db,
                   "SELECT case_id, dose_bytes, accelerator FROM cases WHERE status = 'completed' AND "
                   "configuration = 'bounded-reclaim' AND dose_bytes IS NOT NULL ORDER BY dose_bytes, case_id");
  while (cs.step()) {
    const std::string id = cs.text(0);
    const std::int64_t dose = cs.int64(1);
    if (cs.opt_text(2).value_or("") == "tcg") ++tcg;
    auto& d = doses[dose];
    d.dose_bytes = dose;
    ++d.cases;
    auto fail = [&](std::string why) { d.failed.push_back(fmt::format("{}: {}", id, why)); };
    results::Stmt ra(db, "SELECT requested_bytes, duration_ns, write_errno, achieved_bytes FROM reclaim_actions "
                         "WHERE case_id = ?1 ORDER BY start_ns");
    ra.bind(1, id);
    int n = 0;
    while (ra.step()) {
      ++n;
      ++d.requests;
      const double req = static_cast<double>(ra.int64(0));
      const double dur = static_cast<double>(ra.int64(1)) / 1e9;
      const int err = static_cast<int>(ra.int64(2));
      d.worst_duration_s = std::max(d.worst_duration_s.value_or(0.0), dur);
      if (dur > rule.max_duration_s) fail(fmt::format("reclaim took {:.3f} s > {:.1f} s", dur, rule.max_duration_s));
      if (err == EAGAIN) ++d.eagain;
      else if (err != 0) fail(fmt::format("interface error: memory.reclaim write errno {} ({})", err, std::strerror(err)));
      if (ra.is_null(3)) {
        fail("achieved_bytes not measured");
      } else {
        const double ratio = req > 0 ? static_cast<double>(ra.int64(3)) / req : 0.0;
        d.min_achieved_ratio = std::min(d.min_achieved_ratio.value_or(ratio), ratio);
        if (ratio < rule.min_achieved_ratio)
          fail(fmt::format("achieved {:.2f} of the request < {:.2f}", ratio, rule.min_achieved_ratio));
      }
    }
    if (n == 0) fail("no memory.reclaim write recorded (trigger never fired?)");
    results::Stmt ev(db, "SELECT COUNT(*) FROM controller_events WHERE case_id = ?1 AND kind = 'error'");
    ev.bind(1, id);
    if (ev.step() && ev.int64(0) > 0) fail(fmt::format("interface error: {} controller error event(s)", ev.int64(0)));
    results::Stmt oom(db, "SELECT MAX(COALESCE(bg_oom_kill,0)+COALESCE(fg_oom_kill,0)) - "
                          "MIN(COALESCE(bg_oom_kill,0)+COALESCE(fg_oom_kill,0)), "
                          "COUNT(zram_orig_data_bytes), COUNT(*) FROM telemetry WHERE case_id = ?1");
    oom.bind(1, id);
    if (oom.step()) {
      if (!oom.is_null(0) && oom.int64(0) > 0) fail(fmt::format("OOM: {} oom_kill event(s)", oom.int64(0)));
      if (oom.int64(2) == 0) fail("no telemetry");
      else if (oom.int64(1) == 0) fail("invalid backend telemetry: no zram sample");
    }
    results::Stmt rs(db, "SELECT clean FROM restoration WHERE case_id = ?1");
    rs.bind(1, id);
    if (!rs.step()) fail("no restoration record");
    else if (rs.int64(0) != 1) fail("restoration not clean");
  }
  if (doses.empty())
    throw std::invalid_argument(db_path + ": no completed bounded-reclaim case with dose_bytes (not a pilot DB?)");
  int max_cases = 0;
  for (auto& [dose, d] : doses) max_cases = std::max(max_cases, d.cases);
  for (auto& [dose, d] : doses) {
    if (d.cases < max_cases)
      out.warnings.push_back(fmt::format("dose {} MiB has {} case(s), other doses have {}", dose / 1048576.0, d.cases, max_cases));
    d.eligible = d.failed.empty();
    if (d.eligible) out.chosen_bytes = dose;  // ascending: the last eligible is the largest
    out.doses.push_back(d);
  }
  if (tcg > 0)
    out.warnings.push_back(fmt::format("{} pilot case(s) ran under TCG: reclaim durations are inflated under TCG", tcg));
  return out;
}

Report pilot_report(const std::string& db_path, const PilotResult& r) {
  Report rep;
  rep.title = "Reclaim ablation: pilot dose selection from " + db_path;
  rep.warnings = r.warnings;
  rep.summary.push_back(r.chosen_bytes
                            ? fmt::format("**Chosen dose: {} MiB** ({} bytes), the largest eligible dose.",
                                          *r.chosen_bytes / 1048576.0, *r.chosen_bytes)
                            : std::string("**No eligible dose**: no dose met every criterion; the rule selects none."));
  rep.summary.push_back(fmt::format(
      "Rule (study): eligible iff every request finished within {} s, no OOM or interface error, achieved >= {:.0f}% "
      "of the request (pgsteal x page size), valid backend and restoration telemetry; the largest eligible dose is chosen.",
      r.rule.max_duration_s, r.rule.min_achieved_ratio * 100));
  Table t{"table3_pilot", "Table 3. Pilot doses",
          {{"dose (MiB)", 0}, {"cases", 0}, {"requests", 0}, {"worst duration (ms)", 1}, {"min achieved/requested", 3},
           {"EAGAIN writes", 0}, {"eligible", 0}, {"failed criteria", 0}}, {}, {}};
  for (const auto& d : r.doses) {
    std::string failed;
    for (const auto& f : d.failed) failed += (failed.empty() ? "" : "; ") + f;
    t.add({d.dose_bytes / 1048576.0, d.cases, d.requests,
           d.worst_duration_s ? num(*d.worst_duration_s * 1000.0) : nlohmann::json(nullptr),
           d.min_achieved_ratio ? num(*d.min_achieved_ratio) : nlohmann::json(nullptr), d.eagain,
           d.eligible ? "yes" : "no", failed.empty() ? "-" : failed});
  }
  rep.tables.push_back(t);
  nlohmann::json doses = nlohmann::json::array();
  for (const auto& d : r.doses) doses.push_back({{"dose_bytes", d.dose_bytes}, {"eligible", d.eligible}, {"failed", d.failed}});
  rep.extra = {{"chosen_bytes", r.chosen_bytes ? nlohmann::json(*r.chosen_bytes) : nlohmann::json(nullptr)}, {"doses", doses}};
  return rep;
}

}  // namespace analysis
