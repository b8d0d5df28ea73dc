// Pilot dose selection (see pilot.hpp).
#include "analysis/pilot.hpp"

#include "analysis/study_medians.hpp"
#include "harness/json/limited_parse.hpp"

#include "analysis/backend_validity.hpp"
#include "analysis/campaign_settings.hpp"
#include "analysis/case_outcome.hpp"
#include "analysis/db_columns.hpp"
#include "results/db.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>

namespace analysis {

namespace {
// The pilot chooses the dose of the study's bounded reclaim (docs/PROTOCOL.md "Pilot rule").
const char* const kPilotArm = kStudyArms[kStudyTreatment].name;
}  // namespace

namespace {

// Refuses a DB that is not a pilot DB (std::invalid_argument naming why).
void require_pilot_db(results::Db& db, const std::string& db_path) {
  std::map<std::string, std::string> meta;
  if (has_table(db, "campaign_meta")) {
    results::Stmt st(db, "SELECT key, value FROM campaign_meta");
    while (st.step()) meta[st.text(0)] = st.text(1);
  }
  const auto settings = read_campaign_settings(meta);
  if (settings.design_kind && *settings.design_kind != "pilot")
    throw std::invalid_argument(fmt::format(
        "{} is not a pilot DB: its campaign has design.kind = {} (pilot-select needs design.kind = pilot; analyse "
        "this DB with `harness analyze`)", db_path, *settings.design_kind));
  results::Stmt tr(db, "SELECT COUNT(*), MIN(case_id) FROM cases WHERE triplet_id IS NOT NULL");
  if (tr.step() && tr.int64(0) > 0)
    throw std::invalid_argument(fmt::format(
        "{} is not a pilot DB: {} case(s) belong to matched triplets (e.g. {}); pilot cases have no triplet_id "
        "(analyse this DB with `harness analyze`)", db_path, tr.int64(0), tr.text(1)));
}

}  // namespace

PilotResult select_dose(const std::string& db_path, const PilotRule& rule) {
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  require_pilot_db(db, db_path);
  PilotResult out;
  out.rule = rule;
  std::map<std::int64_t, DoseResult> doses;
  std::map<std::int64_t, std::map<std::string, int>> completed_per_regime;  // dose -> regime -> cases
  std::set<std::string> regimes;  // the campaign's regimes: schedule and cases
  {
    results::Stmt st(db, "SELECT DISTINCT regime FROM cases");
    while (st.step()) regimes.insert(st.text(0));
    if (has_table(db, "schedule")) {
      results::Stmt sc(db, "SELECT DISTINCT regime FROM schedule");
      while (sc.step()) regimes.insert(sc.text(0));
    }
  }
  int tcg = 0;
  {
    results::Stmt st(db, "SELECT case_id FROM cases WHERE status <> 'completed' AND configuration = ?1");
    st.bind(1, kPilotArm);
    while (st.step()) out.warnings.push_back(fmt::format("case {} is not completed: not evaluated", st.text(0)));
  }
  const bool v2 = has_column(db, "reclaim_actions", "achieved_conservative_bytes");
  results::Stmt cs(db,
                   "SELECT case_id, dose_bytes, accelerator, regime, outcome_json, spec_json FROM cases WHERE status = 'completed' AND "
                   "configuration = ?1 AND dose_bytes IS NOT NULL ORDER BY dose_bytes, case_id");
  cs.bind(1, kPilotArm);
  while (cs.step()) {
    const std::string id = cs.text(0);
    const std::int64_t dose = cs.int64(1);
    if (cs.opt_text(2).value_or("") == "tcg") ++tcg;
    ++out.accelerators[cs.opt_text(2).value_or("unknown")];
    ++completed_per_regime[dose][cs.text(3)];
    auto& d = doses[dose];
    d.dose_bytes = dose;
    ++d.cases;
    auto fail = [&](std::string why) { d.failed.push_back(fmt::format("{}: {}", id, why)); };
    results::Stmt ra(db, v2 ? "SELECT requested_bytes, duration_ns, write_errno, achieved_bytes, "
                              "achieved_conservative_bytes FROM reclaim_actions WHERE case_id = ?1 ORDER BY start_ns"
                            : "SELECT requested_bytes, duration_ns, write_errno, achieved_bytes, NULL "
                              "FROM reclaim_actions WHERE case_id = ?1 ORDER BY start_ns");
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
      // Study: "no OOM or interface error": any non-zero errno of the write is an interface
      // error, EAGAIN (the kernel reclaimed less than asked) included.
      if (err == EAGAIN) ++d.eagain;
      if (err != 0) fail(fmt::format("interface error: memory.reclaim write errno {} ({})", err, std::strerror(err)));
      auto ratio_of = [&](int col) -> std::optional<double> {
        if (ra.is_null(col)) return std::nullopt;
        return req > 0 ? static_cast<double>(ra.int64(col)) / req : 0.0;
      };
      // Study: achieved "computed as pgsteal times the page size": the figure across the write is
      // the rule's; the conservative one (minus the concurrent limit-reclaim estimate) is reported.
      const auto across = ratio_of(3), conservative = ratio_of(4);
      if (across) d.min_achieved_ratio = std::min(d.min_achieved_ratio.value_or(*across), *across);
      if (conservative) d.min_conservative_ratio = std::min(d.min_conservative_ratio.value_or(*conservative), *conservative);
      if (!across)
        fail("achieved not measured (reclaim_actions.achieved_bytes NULL)");
      else if (*across < rule.min_achieved_ratio)
        fail(fmt::format("achieved (pgsteal x page size across the write) {:.2f} of the request < {:.2f}", *across,
                         rule.min_achieved_ratio));
    }
    if (n == 0) fail("no memory.reclaim write recorded (trigger never fired?)");
    if (auto oj = cs.opt_text(4)) {  // outcome_json.oom_kills {bg, fg} (harness/case/SPEC.md)
      const auto j = harness::json::parse_or_discarded(*oj);
      const auto bg = json_number(j, {"oom_kills", "bg"}), fg = json_number(j, {"oom_kills", "fg"});
      if (bg.value_or(0) > 0 || fg.value_or(0) > 0)
        fail(fmt::format("OOM: outcome_json.oom_kills bg {} fg {}", bg.value_or(0), fg.value_or(0)));
    }
    results::Stmt ev(db, "SELECT COUNT(*) FROM controller_events WHERE case_id = ?1 AND kind = 'error'");
    ev.bind(1, id);
    if (ev.step() && ev.int64(0) > 0) fail(fmt::format("interface error: {} controller error event(s)", ev.int64(0)));
    results::Stmt oom(db, "SELECT MAX(COALESCE(bg_oom_kill,0)+COALESCE(fg_oom_kill,0)) - "
                          "MIN(COALESCE(bg_oom_kill,0)+COALESCE(fg_oom_kill,0)), COUNT(*) FROM telemetry "
                          "WHERE case_id = ?1");
    oom.bind(1, id);
    if (oom.step()) {
      if (!oom.is_null(0) && oom.int64(0) > 0) fail(fmt::format("OOM: {} oom_kill event(s)", oom.int64(0)));
      if (oom.int64(1) == 0) fail("no telemetry");
    }
    {
      nlohmann::json spec = nullptr, outcome = nullptr;
      if (auto sj = cs.opt_text(5)) spec = harness::json::parse_or_discarded(*sj);
      if (auto oj = cs.opt_text(4)) outcome = harness::json::parse_or_discarded(*oj);
      for (auto& p : backend_telemetry_problems(db, id, ZramDue::InSetup, outcome.is_discarded() ? nullptr : outcome,
                                                spec.is_discarded() ? nullptr : spec))
        fail(std::move(p));
    }
    results::Stmt rs(db, "SELECT clean FROM restoration WHERE case_id = ?1");
    rs.bind(1, id);
    if (!rs.step()) fail("no restoration record");
    else if (rs.int64(0) != 1) fail("restoration not clean");
  }
  if (doses.empty()) {
    // A pilot planned but not (fully) run is the usual cause: say how far it got.
    std::int64_t planned = 0, done = 0;
    try {
      results::Stmt q(db, "SELECT count(*), coalesce(sum(state = 'completed'), 0) FROM schedule");
      if (q.step()) planned = q.int64(0), done = q.int64(1);
    } catch (const results::DbError&) {
    }
    throw std::invalid_argument(fmt::format(
        "{}: no completed bounded-reclaim case with dose_bytes: {} of {} planned case(s) completed{}", db_path, done,
        planned,
        planned > done ? fmt::format(" (run the pilot first: `harness run {}`)", db_path)
                       : std::string(" (is this a pilot DB?)")));
  }
  for (auto& [dose, d] : doses) {
    d.regimes_expected = static_cast<int>(regimes.size());
    std::string gaps;
    for (const auto& rg : regimes) {
      const int k = completed_per_regime[dose].count(rg) ? completed_per_regime[dose][rg] : 0;
      if (k == 1) ++d.regimes_complete;
      else gaps += fmt::format("{}{} has {} completed case(s)", gaps.empty() ? "" : ", ", rg, k);
    }
    if (!gaps.empty()) {
      d.incomplete = true;
      d.failed.insert(d.failed.begin(), fmt::format("incomplete, not eligible: {} of {} regimes have exactly one "
                                                    "completed case ({})", d.regimes_complete, d.regimes_expected, gaps));
    }
    d.eligible = d.failed.empty();
    if (d.eligible) out.chosen_bytes = dose;  // ascending: the last eligible is the largest
    out.doses.push_back(d);
  }
  if (tcg > 0)
    out.warnings.push_back(fmt::format("{} pilot case(s) ran under TCG: reclaim durations are inflated under TCG, the "
                                       "duration criterion is meaningless and timing claims are invalid", tcg));
  return out;
}

Report pilot_report(const std::string& db_path, const PilotResult& r) {
  Report rep;
  rep.title = "Reclaim ablation: pilot dose selection from " + db_path;
  rep.warnings = r.warnings;
  std::string accels;
  for (const auto& [acc, n] : r.accelerators) accels += fmt::format("{}{} {}", accels.empty() ? "" : ", ", n, acc);
  const bool timing_ok = r.duration_criterion_valid();
  const std::string timing_statement =
      timing_ok ? ""
                : fmt::format("Duration criterion meaningless: accelerator TCG ({} of the evaluated case(s): {}). "
                              "Under TCG (software emulation) every memory.reclaim write is slowed by the emulator, "
                              "so the {} s criterion says nothing about a real VM: timing claims are invalid, and {} "
                              "only a test of the pipeline, not a dose to preregister.",
                              r.accelerators.at("tcg"), accels, r.rule.max_duration_s,
                              r.chosen_bytes ? "the chosen dose below is" : "any dose chosen here would be");
  if (!timing_ok) rep.summary.push_back("**" + timing_statement + "**");
  rep.summary.push_back(r.chosen_bytes
                            ? fmt::format("**Chosen dose: {} MiB** ({} bytes), the largest eligible dose{}.",
                                          *r.chosen_bytes / 1048576.0, *r.chosen_bytes,
                                          timing_ok ? "" : " (TCG: duration criterion meaningless, see above)")
                            : std::string("**No eligible dose**: no dose met every criterion; the rule selects none."));
  rep.summary.push_back(fmt::format(
      "Rule (study; docs/PROTOCOL.md): eligible iff every campaign regime has exactly one completed case (else "
      "\"incomplete, not eligible\"), every request finished within {} s, produced no OOM and no interface error "
      "(any non-zero errno of the write, EAGAIN included, or a controller error event), achieved >= {:.0f}% of the "
      "request computed as pgsteal x page size across the write (the conservative figure, minus the estimated "
      "concurrent limit reclaim, is reported beside it and not judged), and left valid backend telemetry (zram "
      "sampled throughout the pressure phase, zram active from the start) and a clean restoration; the largest "
      "eligible dose is chosen.",
      r.rule.max_duration_s, r.rule.min_achieved_ratio * 100));
  Table t{"table3_pilot", "Table 3. Pilot doses",
          {{"dose (MiB)", 0}, {"cases", 0}, {"regimes with one completed case", 0}, {"requests", 0},
           {"worst duration (ms)", 1}, {"min achieved/requested (pgsteal x page size across write; the rule's)", 3,
                                        "min_achieved_ratio"},
           {"min conservative achieved/requested (reported)", 3, "min_conservative_ratio"}, {"EAGAIN writes", 0},
           {"eligible", 0}, {"failed criteria", 0}}, {}, {}};
  for (const auto& d : r.doses) {
    std::string failed;
    for (const auto& f : d.failed) failed += (failed.empty() ? "" : "; ") + f;
    t.add({d.dose_bytes / 1048576.0, d.cases, fmt::format("{} of {}", d.regimes_complete, d.regimes_expected),
           d.requests, d.worst_duration_s ? num(*d.worst_duration_s * 1000.0) : nlohmann::json(kNotMeasured),
           d.min_achieved_ratio ? num(*d.min_achieved_ratio) : nlohmann::json(kNotMeasured),
           d.min_conservative_ratio ? num(*d.min_conservative_ratio) : nlohmann::json(kNotMeasured), d.eagain,
           d.eligible ? "yes" : d.incomplete ? "no (incomplete)" : "no", failed.empty() ? "-" : failed});
  }
  t.notes.push_back("Ratios are shown as measured, never clipped (above 1 = more than requested). Across write = "
                    "(counter after - before) x page size, the study's figure and the rule's; conservative = max(0, across write - "
                    "concurrent estimate), shown for reference. EAGAIN writes fail the rule (an interface error).");
  if (!timing_ok) t.notes.push_back(timing_statement);
  rep.tables.push_back(t);
  nlohmann::json doses = nlohmann::json::array();
  for (const auto& d : r.doses) doses.push_back({{"dose_bytes", d.dose_bytes}, {"eligible", d.eligible}, {"incomplete", d.incomplete}, {"failed", d.failed}});
  rep.extra = {{"chosen_bytes", r.chosen_bytes ? nlohmann::json(*r.chosen_bytes) : nlohmann::json(nullptr)},
               {"doses", doses},
               {"duration_criterion",
                {{"valid", timing_ok},
                 {"max_duration_s", r.rule.max_duration_s},
                 {"accelerators", r.accelerators},
                 {"statement", timing_ok ? nlohmann::json(nullptr) : nlohmann::json(timing_statement)}}}};
  return rep;
}

}  // namespace analysis
