// Pilot dose selection (see pilot.hpp).
#include "analysis/tables/pilot.hpp"

#include "analysis/data/study_facts.hpp"
#include "harness/json/limited_parse.hpp"

#include "analysis/tables/backend_validity.hpp"
#include "analysis/data/campaign_settings.hpp"
#include "analysis/data/case_outcome.hpp"
#include "harness/text/join.hpp"
#include "results/db.hpp"
#include "results/store/case_queries.hpp"
#include "results/store/cases.hpp"
#include "results/store/controller_events.hpp"
#include "results/store/meta.hpp"
#include "results/store/reclaim_actions.hpp"
#include "results/store/restoration.hpp"
#include "results/store/schedule.hpp"
#include "results/store/telemetry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>

namespace analysis {

// The pilot chooses the dose of the study's bounded reclaim (docs/PROTOCOL.md "Pilot rule").
const char* pilot_arm() { return kStudyArms[kStudyTreatment].name; }

namespace {

// Refuses a DB that is not a pilot DB (std::invalid_argument naming why).
void require_pilot_db(results::Db& db, const std::string& db_path) {
  std::map<std::string, std::string> meta;
  if (has_table(db, "campaign_meta")) meta = results::meta_map(db);
  const auto settings = read_campaign_settings(meta);
  if (settings.design_kind && *settings.design_kind != "pilot")
    throw std::invalid_argument(fmt::format(
        "{} is not a pilot DB: its campaign has design.kind = {} (pilot-select needs design.kind = pilot; analyse "
        "this DB with `harness analyze`)", db_path, *settings.design_kind));
  const auto tr = results::triplet_cases(db);
  if (tr.count > 0)
    throw std::invalid_argument(fmt::format(
        "{} is not a pilot DB: {} case(s) belong to matched triplets (e.g. {}); pilot cases have no triplet_id "
        "(analyse this DB with `harness analyze`)", db_path, tr.count, tr.first_id.value_or("")));
}

/// When a failed criterion counts (pilot_reading.hpp): always, or only under one reading.
enum class CountsUnder { Always, CleanRestoration, EagainInterfaceError };

struct Finding {
  std::string text;
  CountsUnder when = CountsUnder::Always;
};

bool counts(const Finding& f, const PilotReading& r) {
  switch (f.when) {
    case CountsUnder::Always: return true;
    case CountsUnder::CleanRestoration: return r.restoration == PilotReading::Restoration::Clean;
    case CountsUnder::EagainInterfaceError: return r.eagain == PilotReading::Eagain::InterfaceError;
  }
  return true;
}

/// True for a restoration problem that is the VM's state rather than the case's teardown
/// (PilotReading::Restoration::CaseTeardown), in the wording of
/// harness/case/host/restoration_check.cpp: the VM's MemAvailable shortfall (verbatim
/// outcome_json.vm_state.baseline_check.problem), or swap in use on a device the case did not
/// enable ("swap in use: DEVICE holds N KiB"; the case's own devices read "swap device ...
/// enabled by the case is still active", and an unreadable /proc/swaps is no device at all).
bool vm_state_problem(const std::string& problem, const nlohmann::json& outcome) {
  const nlohmann::json* bc = nullptr;
  if (outcome.is_object() && outcome.contains("vm_state") && outcome["vm_state"].is_object() &&
      outcome["vm_state"].contains("baseline_check"))
    bc = &outcome["vm_state"]["baseline_check"];
  if (bc && bc->is_object() && bc->contains("problem") && (*bc)["problem"].is_string() &&
      (*bc)["problem"].get<std::string>() == problem)
    return true;
  const std::string foreign = "swap in use: ";
  return problem.rfind(foreign, 0) == 0 && problem.rfind(foreign + "/proc/swaps unreadable", 0) != 0;
}

/// The restoration finding of an unclean restoration: counted under every reading unless every
/// recorded problem (outcome_json.restoration.problems) is VM state; a restoration without its
/// problems recorded is counted always.
Finding unclean_restoration(const nlohmann::json& outcome) {
  const nlohmann::json* pr = nullptr;
  if (outcome.is_object() && outcome.contains("restoration") && outcome["restoration"].is_object() &&
      outcome["restoration"].contains("problems") && outcome["restoration"]["problems"].is_array())
    pr = &outcome["restoration"]["problems"];
  if (!pr || pr->empty()) return {"restoration not clean", CountsUnder::Always};
  std::string all;
  bool only_vm = true;
  for (const auto& p : *pr) {
    const std::string t = p.is_string() ? p.get<std::string>() : p.dump();
    all += (all.empty() ? "" : "; ") + t;
    if (!vm_state_problem(t, outcome)) only_vm = false;
  }
  if (only_vm) return {"restoration not clean, VM state only (restoration: case-teardown sets it aside): " + all,
                       CountsUnder::CleanRestoration};
  return {"restoration not clean: " + all, CountsUnder::Always};
}

/// The campaign's regimes: those of its cases and of its schedule.
std::set<std::string> campaign_regimes(results::Db& db) {
  const auto all = results::case_and_schedule_regimes(db);
  return std::set<std::string>(all.begin(), all.end());
}

/// What select_dose gathers over the pilot's completed cases, per dose.
struct DoseTally {
  std::map<std::int64_t, DoseResult> doses;
  std::map<std::int64_t, std::vector<Finding>> findings;  // dose -> every failed criterion, tagged
  std::map<std::int64_t, std::map<std::string, int>> completed_per_regime;  // dose -> regime -> cases
  int tcg = 0;
};

/// One case's failed criteria, each "<case>: <why>" with when it counts.
struct CaseFindings {
  const std::string& id;
  std::vector<Finding>& out;
  void fail(const std::string& why, CountsUnder when = CountsUnder::Always) {
    out.push_back({fmt::format("{}: {}", id, why), when});
  }
};

/// The case's memory.reclaim writes against the rule: duration, errno, achieved ratio (the
/// conservative figure not measured when the DB predates its column).
void judge_reclaim_writes(results::Db& db, const std::string& id, const PilotRule& rule, DoseResult& d,
                          CaseFindings& f) {
  int n = 0;
  for (const auto& w : results::read_reclaim_actions(db, id)) {
    ++n;
    ++d.requests;
    const double req = static_cast<double>(w.requested_bytes);
    const double dur = static_cast<double>(w.duration_ns) / 1e9;
    const int err = static_cast<int>(w.write_errno);
    d.worst_duration_s = std::max(d.worst_duration_s.value_or(0.0), dur);
    if (dur > rule.max_duration_s) f.fail(fmt::format("reclaim took {:.3f} s > {:.1f} s", dur, rule.max_duration_s));
    // Study: "no OOM or interface error": any non-zero errno of the write is an interface
    // error; EAGAIN (the kernel reclaimed less than asked) too under the default reading,
    // a partial reclaim judged by the achieved criterion under `eagain: partial-reclaim`.
    if (err == EAGAIN) ++d.eagain;
    if (err != 0)
      f.fail(fmt::format("interface error: memory.reclaim write errno {} ({})", err, std::strerror(err)),
             err == EAGAIN ? CountsUnder::EagainInterfaceError : CountsUnder::Always);
    auto ratio_of = [&](const std::optional<std::int64_t>& bytes) -> std::optional<double> {
      if (!bytes) return std::nullopt;
      return req > 0 ? static_cast<double>(*bytes) / req : 0.0;
    };
    // Study: achieved "computed as pgsteal times the page size": the figure across the write is
    // the rule's; the conservative one (minus the concurrent limit-reclaim estimate) is reported.
    const auto across = ratio_of(w.achieved_bytes), conservative = ratio_of(w.achieved_conservative_bytes);
    if (across) d.min_achieved_ratio = std::min(d.min_achieved_ratio.value_or(*across), *across);
    if (conservative) d.min_conservative_ratio = std::min(d.min_conservative_ratio.value_or(*conservative), *conservative);
    if (!across)
      f.fail("achieved not measured (reclaim_actions.achieved_bytes NULL)");
    else if (*across < rule.min_achieved_ratio)
      f.fail(fmt::format("achieved (pgsteal x page size across the write) {:.2f} of the request < {:.2f}", *across,
                         rule.min_achieved_ratio));
  }
  if (n == 0) f.fail("no memory.reclaim write recorded (trigger never fired?)");
}

/// OOM kills (outcome and telemetry), controller errors and missing telemetry.
void judge_oom_and_errors(results::Db& db, const std::string& id, const std::optional<std::string>& outcome_text,
                          CaseFindings& f) {
  if (outcome_text) {  // outcome_json.oom_kills {bg, fg} (harness/case/SPEC.md)
    const auto j = harness::json::parse_or_discarded(*outcome_text);
    const auto bg = json_number(j, {"oom_kills", "bg"}), fg = json_number(j, {"oom_kills", "fg"});
    if (bg.value_or(0) > 0 || fg.value_or(0) > 0)
      f.fail(fmt::format("OOM: outcome_json.oom_kills bg {} fg {}", bg.value_or(0), fg.value_or(0)));
  }
  if (const auto errors = results::count_events(db, id, "error"); errors > 0)
    f.fail(fmt::format("interface error: {} controller error event(s)", errors));
  const auto oom = results::oom_kills(db, id);
  if (oom.kills && *oom.kills > 0) f.fail(fmt::format("OOM: {} oom_kill event(s)", *oom.kills));
  if (oom.samples == 0) f.fail("no telemetry");
}

/// Backend telemetry validity and the restoration record.
void judge_backend_and_restoration(results::Db& db, const std::string& id, const std::optional<std::string>& outcome_text,
                                   const std::optional<std::string>& spec_text, CaseFindings& f) {
  nlohmann::json spec = nullptr, outcome = nullptr;
  if (spec_text) spec = harness::json::parse_or_discarded(*spec_text);
  if (outcome_text) outcome = harness::json::parse_or_discarded(*outcome_text);
  if (outcome.is_discarded()) outcome = nullptr;
  for (auto& p : backend_telemetry_findings(db, id, ZramDue::InSetup, outcome, spec.is_discarded() ? nullptr : spec))
    f.fail(p);
  const auto restoration = results::read_restoration(db, id);
  if (!restoration) f.fail("no restoration record");
  else if (restoration->clean != 1) {
    const Finding u = unclean_restoration(outcome);
    f.fail(u.text, u.when);
  }
}

/// Every completed pilot case with a dose, judged by the rule's criteria into `t`.
void judge_pilot_cases(results::Db& db, const PilotRule& rule, DoseTally& t, PilotResult& out) {
  for (const auto& c : results::completed_dosed_cases(db, pilot_arm())) {
    const std::string& id = c.case_id;
    const std::int64_t dose = *c.dose_bytes;
    if (c.accelerator.value_or("") == "tcg") ++t.tcg;
    ++out.accelerators[c.accelerator.value_or("unknown")];
    ++t.completed_per_regime[dose][c.regime];
    auto& d = t.doses[dose];
    d.dose_bytes = dose;
    ++d.cases;
    CaseFindings f{id, t.findings[dose]};
    judge_reclaim_writes(db, id, rule, d, f);
    judge_oom_and_errors(db, id, c.outcome_json, f);
    judge_backend_and_restoration(db, id, c.outcome_json, c.spec_json, f);
  }
}

/// No dose to judge: says how far the pilot got (a pilot planned but not fully run is the usual cause).
[[noreturn]] void no_pilot_dose(results::Db& db, const std::string& db_path) {
  std::int64_t planned = 0, done = 0;
  try {
    for (const auto& r : results::read_schedule(db)) {
      ++planned;
      done += r.state == "completed";
    }
  } catch (const results::DbError&) {
    // a DB without a schedule (a bare results DB) leaves both counts 0; the error below still says no dose was found
  }
  throw std::invalid_argument(fmt::format(
      "{}: no completed {} case with dose_bytes: {} of {} planned case(s) completed{}", db_path, pilot_arm(), done,
      planned,
      planned > done ? fmt::format(" (run the pilot first: `harness run {}`)", db_path)
                     : std::string(" (is this a pilot DB?)")));
}

/// Each dose's verdict under the rule's reading (a dose needs exactly one completed case per
/// regime); the largest eligible dose is chosen.
void decide_doses(const std::set<std::string>& regimes, const PilotRule& rule, DoseTally& t, PilotResult& out) {
  for (auto& [dose, d] : t.doses) {
    d.regimes_expected = static_cast<int>(regimes.size());
    std::string gaps;
    for (const auto& rg : regimes) {
      const int k = t.completed_per_regime[dose].count(rg) ? t.completed_per_regime[dose][rg] : 0;
      if (k == 1) ++d.regimes_complete;
      else gaps += fmt::format("{}{} has {} completed case(s)", gaps.empty() ? "" : ", ", rg, k);
    }
    auto& fs = t.findings[dose];
    if (!gaps.empty()) {
      d.incomplete = true;
      fs.insert(fs.begin(), Finding{fmt::format("incomplete, not eligible: {} of {} regimes have exactly one completed case "
                                         "({})", d.regimes_complete, d.regimes_expected, gaps),
                             CountsUnder::Always});
    }
    for (const auto& f : fs) (counts(f, rule.reading) ? d.failed : d.set_aside).push_back(f.text);
    d.eligible = d.failed.empty();
    if (d.eligible) out.chosen_bytes = dose;  // ascending: the last eligible is the largest
    out.doses.push_back(d);
  }
}

/// The eligible doses and the choice under every reading (pilot_reading.hpp).
void choices_per_reading(const std::map<std::int64_t, std::vector<Finding>>& findings, PilotResult& out) {
  for (const auto& reading : all_pilot_readings()) {
    ReadingChoice c{reading, {}, std::nullopt};
    for (const auto& [dose, fs] : findings)
      if (std::none_of(fs.begin(), fs.end(), [&](const Finding& f) { return counts(f, reading); })) {
        c.eligible_bytes.push_back(dose);
        c.chosen_bytes = dose;
      }
    out.readings.push_back(c);
  }
}

}  // namespace

PilotResult select_dose(const std::string& db_path, const PilotRule& rule) {
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  require_pilot_db(db, db_path);
  PilotResult out;
  out.rule = rule;
  const std::set<std::string> regimes = campaign_regimes(db);
  {
    for (const auto& id : results::uncompleted_case_ids(db, pilot_arm()))
      out.warnings.push_back(fmt::format("case {} is not completed: not evaluated", id));
  }
  DoseTally t;
  judge_pilot_cases(db, rule, t, out);
  if (t.doses.empty()) no_pilot_dose(db, db_path);
  decide_doses(regimes, rule, t, out);
  choices_per_reading(t.findings, out);
  if (t.tcg > 0)
    out.warnings.push_back(fmt::format("{} pilot case(s) ran under TCG: reclaim durations are inflated under TCG, the "
                                       "duration criterion is meaningless and timing claims are invalid", t.tcg));
  return out;
}

namespace {

/// Why the duration criterion says nothing when some case ran under TCG ("" when none did).
std::string tcg_duration_statement(const PilotResult& r) {
  if (r.duration_criterion_valid()) return "";
  std::string accels;
  for (const auto& [acc, n] : r.accelerators) accels += fmt::format("{}{} {}", accels.empty() ? "" : ", ", n, acc);
  return fmt::format("Duration criterion meaningless: accelerator TCG ({} of the evaluated case(s): {}). "
                     "Under TCG (software emulation) every memory.reclaim write is slowed by the emulator, "
                     "so the {} s criterion says nothing about a real VM: timing claims are invalid, and {} "
                     "only a test of the pipeline, not a dose to preregister.",
                     r.accelerators.at("tcg"), accels, r.rule.max_duration_s,
                     r.chosen_bytes ? "the chosen dose below is" : "any dose chosen here would be");
}

/// The summary: the TCG statement, the chosen dose, and the rule in words with its reading.
void pilot_summary(const PilotResult& r, const std::string& timing_statement, Report& rep) {
  const bool timing_ok = r.duration_criterion_valid();
  if (!timing_ok) rep.summary.push_back("**" + timing_statement + "**");
  rep.summary.push_back(r.chosen_bytes
                            ? fmt::format("**Chosen dose: {} MiB** ({} bytes), the largest eligible dose{}.",
                                          *r.chosen_bytes / 1048576.0, *r.chosen_bytes,
                                          timing_ok ? "" : " (TCG: duration criterion meaningless, see above)")
                            : std::string("**No eligible dose**: no dose met every criterion; the rule selects none."));
  const bool eagain_error = r.rule.reading.eagain == PilotReading::Eagain::InterfaceError;
  const bool clean = r.rule.reading.restoration == PilotReading::Restoration::Clean;
  rep.summary.push_back(fmt::format(
      "Rule (study; docs/PROTOCOL.md): eligible iff every campaign regime has exactly one completed case (else "
      "\"incomplete, not eligible\"), every request finished within {} s, produced no OOM and no interface error "
      "(any non-zero errno of the write{}, or a controller error event), achieved >= {:.0f}% of the "
      "request computed as pgsteal x page size across the write (the conservative figure, minus the estimated "
      "concurrent limit reclaim, is reported beside it and not judged), and left valid backend telemetry (zram "
      "sampled throughout the pressure phase, zram active from the start) and {}; the largest eligible dose is "
      "chosen. Reading (campaign YAML eligibility.restoration, eligibility.eagain): {}.",
      r.rule.max_duration_s,
      eagain_error ? ", EAGAIN included" : " except EAGAIN, a partial reclaim judged by the achieved criterion alone",
      r.rule.min_achieved_ratio * 100,
      clean ? "a clean restoration (restoration.clean = 1)"
            : "a verified teardown of the case's own objects (a MemAvailable shortfall against the VM's baseline and "
              "swap in use on a device the case did not enable are set aside as VM state)",
      r.rule.reading.text()));
}

/// Table 3: one row per dose, its measures, eligibility and failed criteria.
Table pilot_table3(const PilotResult& r, const std::string& timing_statement) {
  const bool eagain_error = r.rule.reading.eagain == PilotReading::Eagain::InterfaceError;
  Table t{"table3_pilot", "Table 3. Pilot doses",
          {{"dose (MiB)", 0}, {"cases", 0}, {"regimes with one completed case", 0}, {"requests", 0},
           {"worst duration (ms)", 1}, {"min achieved/requested (pgsteal x page size across write; the rule's)", 3,
                                        "min_achieved_ratio"},
           {"min conservative achieved/requested (reported)", 3, "min_conservative_ratio"}, {"EAGAIN writes", 0},
           {"eligible", 0}, {"failed criteria", 0}}, {}, {}};
  for (const auto& d : r.doses) {
    const std::string failed = harness::text::join(d.failed, "; ");
    t.add({d.dose_bytes / 1048576.0, d.cases, fmt::format("{} of {}", d.regimes_complete, d.regimes_expected),
           d.requests, d.worst_duration_s ? num(*d.worst_duration_s * 1000.0) : nlohmann::json(kNotMeasured),
           d.min_achieved_ratio ? num(*d.min_achieved_ratio) : nlohmann::json(kNotMeasured),
           d.min_conservative_ratio ? num(*d.min_conservative_ratio) : nlohmann::json(kNotMeasured), d.eagain,
           d.eligible ? "yes" : d.incomplete ? "no (incomplete)" : "no", failed.empty() ? "-" : failed});
  }
  t.notes.push_back(std::string("Ratios are shown as measured, never clipped (above 1 = more than requested). Across "
                                "write = (counter after - before) x page size, the study's figure and the rule's; "
                                "conservative = max(0, across write - concurrent estimate), shown for reference. ") +
                    (eagain_error ? "EAGAIN writes fail the rule (an interface error)."
                                  : "EAGAIN writes are partial reclaim, judged by the achieved criterion alone."));
  for (const auto& d : r.doses)
    if (!d.set_aside.empty()) {
      const std::string s = harness::text::join(d.set_aside, "; ");
      t.notes.push_back(fmt::format("{} MiB, set aside by this reading ({}): {}", d.dose_bytes / 1048576.0,
                                    r.rule.reading.text(), s));
    }
  if (!r.duration_criterion_valid()) t.notes.push_back(timing_statement);
  return t;
}

/// Beside Table 3: the dose each reading of the two open phrases chooses (same thresholds).
Table pilot_readings_table(const PilotResult& r) {
  Table rt{"table3_readings", "Table 3 (readings). The dose each reading of the rule chooses",
           {{"restoration (eligibility.restoration)", 0}, {"EAGAIN (eligibility.eagain)", 0}, {"eligible doses (MiB)", 0},
            {"chosen dose (MiB)", 0}, {"this campaign's reading", 0}},
           {}, {}};
  for (const auto& c : r.readings) {
    std::string el;
    for (auto b : c.eligible_bytes) el += fmt::format("{}{}", el.empty() ? "" : ", ", b / 1048576.0);
    rt.add({name_of(c.reading.restoration), name_of(c.reading.eagain), el.empty() ? "none" : el,
            c.chosen_bytes ? nlohmann::json(*c.chosen_bytes / 1048576.0) : nlohmann::json("none"),
            c.reading == r.rule.reading ? "yes" : "-"});
  }
  rt.notes.push_back("Two phrases of the study's rule admit two readings each (campaigns/README.md \"Assumptions\"): "
                     "\"valid restoration telemetry\" as restoration.clean = 1 (clean) or as the case's own teardown "
                     "verified, VM state set aside (case-teardown); EAGAIN from a 6.1 memory.reclaim write as an "
                     "interface error (interface-error) or as partial reclaim judged by the 80% criterion "
                     "(partial-reclaim). The campaign's reading decides; the others are shown so that a reader sees "
                     "whether the choice of reading changed the dose.");
  return rt;
}

/// Report::extra of the pilot report: the choice, each dose, each reading, the duration criterion.
nlohmann::json pilot_extra(const PilotResult& r, const std::string& timing_statement) {
  const bool timing_ok = r.duration_criterion_valid();
  nlohmann::json doses = nlohmann::json::array();
  for (const auto& d : r.doses)
    doses.push_back({{"dose_bytes", d.dose_bytes}, {"eligible", d.eligible}, {"incomplete", d.incomplete},
                     {"failed", d.failed}, {"set_aside", d.set_aside}});
  nlohmann::json readings = nlohmann::json::array();
  for (const auto& c : r.readings)
    readings.push_back({{"restoration", name_of(c.reading.restoration)},
                        {"eagain", name_of(c.reading.eagain)},
                        {"eligible_bytes", c.eligible_bytes},
                        {"chosen_bytes", c.chosen_bytes ? nlohmann::json(*c.chosen_bytes) : nlohmann::json(nullptr)},
                        {"campaign", c.reading == r.rule.reading}});
  return {{"chosen_bytes", r.chosen_bytes ? nlohmann::json(*r.chosen_bytes) : nlohmann::json(nullptr)},
          {"doses", doses},
          {"reading", {{"restoration", name_of(r.rule.reading.restoration)}, {"eagain", name_of(r.rule.reading.eagain)}}},
          {"readings", readings},
          {"duration_criterion",
           {{"valid", timing_ok},
            {"max_duration_s", r.rule.max_duration_s},
            {"accelerators", r.accelerators},
            {"statement", timing_ok ? nlohmann::json(nullptr) : nlohmann::json(timing_statement)}}}};
}

}  // namespace

Report pilot_report(const std::string& db_path, const PilotResult& r) {
  Report rep;
  rep.title = "Reclaim ablation: pilot dose selection from " + db_path;
  rep.warnings = r.warnings;
  const std::string timing_statement = tcg_duration_statement(r);
  pilot_summary(r, timing_statement, rep);
  rep.tables.push_back(pilot_table3(r, timing_statement));
  rep.tables.push_back(pilot_readings_table(r));
  rep.extra = pilot_extra(r, timing_statement);
  return rep;
}

}  // namespace analysis
