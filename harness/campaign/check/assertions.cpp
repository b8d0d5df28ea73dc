// CI assertion evaluation and JUnit XML (see assertions.hpp).
#include "harness/campaign/check/assertions.hpp"

#include "harness/campaign/model/campaign_arms.hpp"
#include "harness/text/join.hpp"
#include "harness/text/utc.hpp"
#include "harness/xml/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <fstream>
#include <iterator>
#include <ostream>
#include <optional>
#include <set>

#include "harness/campaign/store/campaign_db.hpp"
#include "results/store/attempts.hpp"
#include "results/store/canary_requests.hpp"
#include "results/store/case_queries.hpp"
#include "results/store/cases.hpp"
#include "results/store/controller_events.hpp"
#include "results/store/phases.hpp"
#include "results/store/reclaim_actions.hpp"
#include "results/store/restoration.hpp"
#include "results/store/schedule.hpp"
#include "results/store/telemetry.hpp"

namespace harness::campaign {
using harness::xml::xml_text;
namespace {

std::string bound_text(double v) { return fmt::format("{:g}", v); }

/// Hyndman-Fan type 7 quantile (numpy's default) of sorted `v`, 0 <= p <= 1.
double quantile7(const std::vector<double>& v, double p) {
  const double h = (static_cast<double>(v.size()) - 1) * p;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (h - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

/// The completed cases that are scheduled, in plan order; those of arm `configuration` when given.
std::vector<std::string> completed_cases(results::Db& db, const std::optional<std::string>& configuration = std::nullopt) {
  return results::completed_scheduled_case_ids(db, kCompletedStatus, configuration);
}

/// The cases table row of `id` (what ran it); empty fields when not recorded.
CaseRun case_run(results::Db& db, const std::string& id) {
  CaseRun r;
  r.case_id = id;
  const auto c = results::read_case(db, id);
  if (!c) return r;
  r.kernel_release = c->kernel_release.value_or("");
  r.accelerator = c->accelerator.value_or("");
  r.source_commit = c->source_commit.value_or("");
  if (!r.source_commit.empty() && c->source_dirty.value_or(0) == 1) r.source_commit += "+dirty";
  r.started_unix_ns = c->started_unix_ns;
  r.ended_unix_ns = c->ended_unix_ns;
  r.attempt = static_cast<int>(c->attempt);
  return r;
}

/// Records one case's value; a failing one is also a failure line (same text).
void record_measure(AssertionResult& r, const std::string& id, const std::string& quantity, std::optional<double> v,
                    const std::string& unit, bool ok, const std::string& detail) {
  r.measured.push_back({id, quantity, v, unit, ok, id + ": " + detail});
  if (!ok) r.failures.push_back(id + ": " + detail);
}

/// Counts `id` as checked and records what ran it.
void record_checked(results::Db& db, AssertionResult& r, const std::string& id) {
  ++r.cases_checked;
  r.runs.push_back(case_run(db, id));
}

/// all_cases_completed: every scheduled case not in `not_run`, its state (and the last
/// attempt's error when it is not completed).
void eval_all_completed(results::Db& db, AssertionResult& r, const std::set<std::string>& not_run) {
  for (const auto& row : results::read_schedule(db)) {
    const std::string& id = row.case_id;
    const std::string& state = row.state;
    if (not_run.count(id)) continue;  // deliberately not run by this check (--baseline-db)
    ++r.cases_checked;
    if (state != "pending") r.runs.push_back(case_run(db, id));
    std::string why = state;
    if (state != "completed")
      if (const auto error = results::last_attempt_error(db, id)) why += ": " + *error;
    record_measure(r, id, "state", state == "completed" ? 1.0 : 0.0, "state", state == "completed", why);
  }
}

/// reclaim_achieved_ratio and reclaim_duration_s: the first reclaim write of each completed
/// case of the study's one-write arm (its dose, its pilot rule); other arms' writes are their own.
void eval_reclaim(results::Db& db, const Assertion& a, AssertionResult& r, const std::string& bound) {
  const bool ratio_kind = a.kind == "reclaim_achieved_ratio";
  const std::string quantity = ratio_kind ? "achieved_ratio" : "reclaim_s";
  const std::string unit = ratio_kind ? "ratio" : "s";
  for (const auto& id : completed_cases(db, study_treatment())) {
    record_checked(db, r, id);
    const auto writes = results::read_reclaim_actions(db, id);
    if (writes.empty()) {
      record_measure(r, id, quantity, std::nullopt, unit, false, "no reclaim action (trigger never fired?)");
      continue;
    }
    const auto& w = writes.front();
    if (ratio_kind) {
      if (!w.achieved_bytes) {
        record_measure(r, id, quantity, std::nullopt, unit, false, "achieved_bytes not measured");
        continue;
      }
      const double ratio = static_cast<double>(*w.achieved_bytes) / static_cast<double>(w.requested_bytes);
      record_measure(r, id, quantity, ratio, unit, ratio >= *a.min,
                     fmt::format("achieved {:.3f} of the request ({} of {} bytes, errno {}) {}", ratio, *w.achieved_bytes,
                                 w.requested_bytes, w.write_errno, bound));
    } else {
      const double sec = static_cast<double>(w.duration_ns) / 1e9;
      record_measure(r, id, quantity, sec, unit, sec <= *a.max,
                     fmt::format("memory.reclaim write took {:.3f} s ({} bytes requested) {}", sec, w.requested_bytes,
                                 bound));
    }
  }
}

/// trigger_within_s: the first trigger (or would_trigger) of each completed case, seconds
/// after the pressure phase began.
void eval_trigger_within(results::Db& db, const Assertion& a, AssertionResult& r, const std::string& bound) {
  for (const auto& id : completed_cases(db)) {
    record_checked(db, r, id);
    const auto trigger = results::first_event_ns(db, id, {"trigger", "would_trigger"});
    const auto pressure = results::read_phase(db, id, "pressure");
    if (!trigger) {
      record_measure(r, id, "trigger_after_s", std::nullopt, "s", false, "trigger never fired");
    } else if (!pressure) {
      record_measure(r, id, "trigger_after_s", std::nullopt, "s", false, "no pressure phase recorded");
    } else {
      const double sec = static_cast<double>(*trigger - pressure->start_ns) / 1e9;
      record_measure(r, id, "trigger_after_s", sec, "s", sec <= *a.max,
                     fmt::format("trigger fired {:.1f} s after the pressure phase began {}", sec, bound));
    }
  }
}

/// restoration_clean: each completed case's restoration record says clean.
void eval_restoration_clean(results::Db& db, AssertionResult& r) {
  for (const auto& id : completed_cases(db)) {
    record_checked(db, r, id);
    const auto restoration = results::read_restoration(db, id);
    if (!restoration) record_measure(r, id, "restoration_clean", std::nullopt, "clean", false, "no restoration record");
    else if (restoration->clean != 1)
      record_measure(r, id, "restoration_clean", 0.0, "clean", false,
                     "restoration not clean: " + restoration->detail_json.value_or("(no detail)").substr(0, 300));
    else
      record_measure(r, id, "restoration_clean", 1.0, "clean", true, "restoration clean");
  }
}

/// no_foreground_oom: each completed case measured fg oom_kill and it stayed 0.
void eval_no_foreground_oom(results::Db& db, AssertionResult& r) {
  for (const auto& id : completed_cases(db)) {
    record_checked(db, r, id);
    const auto fg = results::fg_oom_kills(db, id);
    if (fg.measured == 0)
      record_measure(r, id, "fg_oom_kills", std::nullopt, "count", false, "fg memory.events oom_kill never measured");
    else
      record_measure(r, id, "fg_oom_kills", static_cast<double>(*fg.max), "count", *fg.max == 0,
                     fmt::format("{} foreground OOM kill(s)", *fg.max));
  }
}

/// canary_p99_ms: the pressure-phase p99 of each canary of each completed case.
void eval_canary_p99(results::Db& db, const Assertion& a, AssertionResult& r, const std::string& bound) {
  for (const auto& id : completed_cases(db)) {
    record_checked(db, r, id);
    for (const char* canary : {"compute", "sqlite"}) {
      // Requests whose scheduled start lies in the pressure phase (study: primary outcome);
      // a request that never completed counts as infinitely late.
      std::vector<double> v;
      for (const auto& response : results::pressure_responses(db, id, canary))
        v.push_back(response ? static_cast<double>(*response) / 1e6 : INFINITY);
      const std::string quantity = std::string(canary) + "_p99_ms";
      if (v.empty()) {
        record_measure(r, id, quantity, std::nullopt, "ms", false,
                       std::string("no ") + canary + " requests in the pressure phase");
        continue;
      }
      std::sort(v.begin(), v.end());
      const double p99 = quantile7(v, 0.99);
      record_measure(r, id, quantity, p99, "ms", p99 <= *a.max,
                     fmt::format("{} p99 {:.2f} ms over {} pressure-phase requests {}", canary, p99, v.size(), bound));
    }
  }
}

/// One assertion over `db` (the kinds: assertions.hpp).
AssertionResult evaluate(results::Db& db, const Assertion& a, const std::set<std::string>& not_run) {
  AssertionResult r;
  r.name = a.kind + (a.min ? " >= " + bound_text(*a.min) : "") + (a.max ? " <= " + bound_text(*a.max) : "");
  const std::string bound = a.min ? "(>= " + bound_text(*a.min) + " needed)" : a.max ? "(<= " + bound_text(*a.max) + " allowed)" : "";
  if (a.kind == "all_cases_completed") eval_all_completed(db, r, not_run);
  else if (a.kind == "reclaim_achieved_ratio" || a.kind == "reclaim_duration_s") eval_reclaim(db, a, r, bound);
  else if (a.kind == "trigger_within_s") eval_trigger_within(db, a, r, bound);
  else if (a.kind == "restoration_clean") eval_restoration_clean(db, r);
  else if (a.kind == "no_foreground_oom") eval_no_foreground_oom(db, r);
  else if (a.kind == "canary_p99_ms") eval_canary_p99(db, a, r, bound);
  else r.failures.push_back("unknown assertion kind " + a.kind);
  if (r.cases_checked == 0 && a.kind != "all_cases_completed") r.failures.push_back("no completed case to check");
  r.passed = r.failures.empty();
  return r;
}

}  // namespace

std::string assertion_summary(const AssertionResult& r) {
  struct Range {
    std::optional<double> lo, hi;
    int missing = 0;
    std::string unit;
  };
  std::vector<std::pair<std::string, Range>> ranges;  // in the order measured
  for (const auto& m : r.measured) {
    if (m.unit == "state" || m.unit == "clean") continue;  // pass/fail says it all
    auto it = std::find_if(ranges.begin(), ranges.end(), [&](const auto& q) { return q.first == m.quantity; });
    if (it == ranges.end()) {
      ranges.emplace_back(m.quantity, Range{});
      it = std::prev(ranges.end());
      it->second.unit = m.unit;
    }
    Range& q = it->second;
    if (!m.value) ++q.missing;
    else q.lo = std::min(q.lo.value_or(*m.value), *m.value), q.hi = std::max(q.hi.value_or(*m.value), *m.value);
  }
  std::string s = fmt::format("{}  {}  ({} case(s)", r.passed ? "PASS" : "FAIL", r.name, r.cases_checked);
  if (!r.passed) s += fmt::format(", {} failed", r.failures.size());
  for (const auto& [quantity, q] : ranges) {
    const std::string unit = q.unit == "ratio" || q.unit == "count" ? "" : " " + q.unit;
    s += "; " + quantity;
    if (q.lo) s += *q.lo == *q.hi ? fmt::format(" {:.3g}{}", *q.lo, unit) : fmt::format(" {:.3g} to {:.3g}{}", *q.lo, *q.hi, unit);
    if (q.missing) s += fmt::format("{} {} not measured", q.lo ? "," : "", q.missing);
  }
  return s + ")";
}

std::vector<AssertionResult> evaluate_assertions(results::Db& db, const Campaign& c,
                                                 const std::set<std::string>& not_run) {
  std::vector<AssertionResult> out;
  for (const auto& a : c.assertions) out.push_back(evaluate(db, a, not_run));
  return out;
}

namespace {

/// Distinct non-empty values joined with ", " ("unknown" when none was recorded).
template <typename F>
std::string distinct(const std::vector<CaseRun>& runs, F field) {
  std::set<std::string> v;
  for (const auto& r : runs)
    if (!field(r).empty()) v.insert(field(r));
  return v.empty() ? "unknown" : text::join(v);
}

std::string or_unknown(const std::string& s) { return s.empty() ? "unknown" : s; }

/// The <testsuite> counts: assertions that failed, regressions and failed extra cases
/// (failures), extra cases in error (errors), metrics without data or undecided (skipped).
struct JUnitCounts {
  std::size_t tests = 0;
  int failures = 0, errors = 0, skipped = 0;
};

JUnitCounts junit_counts(const std::vector<AssertionResult>& results,
                         const std::vector<analysis::MetricComparison>* metrics,
                         const std::vector<JUnitExtraCase>* extra) {
  JUnitCounts n;
  n.tests = results.size() + (metrics ? metrics->size() : 0) + (extra ? extra->size() : 0);
  for (const auto& r : results) n.failures += r.passed ? 0 : 1;
  if (metrics)
    for (const auto& m : *metrics) {
      n.failures += m.verdict == "regression" ? 1 : 0;
      n.skipped += m.verdict == "no data" || m.verdict == "inconclusive" ? 1 : 0;
    }
  if (extra)
    for (const auto& x : *extra) {
      n.errors += x.error.empty() ? 0 : 1;
      n.failures += x.error.empty() && !x.failure.empty() ? 1 : 0;
    }
  return n;
}

/// One <property name value/> line.
void junit_property(std::ostream& o, const std::string& name, const std::string& value) {
  o << "      <property name=\"" << xml_text(name) << "\" value=\"" << xml_text(value) << "\"/>\n";
}

/// The build, plan and command line properties every testcase carries (none without `prov`).
void provenance_properties(std::ostream& o, const results::Provenance* prov) {
  if (!prov) return;
  junit_property(o, "harness_version", or_unknown(prov->build.version));
  junit_property(o, "harness_commit", or_unknown(prov->build.source_commit) + (prov->build.source_dirty ? "+dirty" : ""));
  junit_property(o, "plan_sha256", or_unknown(prov->plan_sha256));
  junit_property(o, "command_line", or_unknown(prov->command_line));
  if (prov->synthetic) junit_property(o, "synthetic", results::synthetic_banner());
}

/// The <system-out> of an assertion: the cases checked, then per measured value its line and
/// what ran its case.
std::string assertion_system_out(const AssertionResult& r) {
  std::string out = std::to_string(r.cases_checked) + " case(s) checked\n";
  for (const auto& m : r.measured) {
    out += (m.passed ? "ok   " : "FAIL ") + m.detail + "\n";
    for (const auto& c : r.runs)
      if (c.case_id == m.case_id)
        out += fmt::format("     kernel {}, accelerator {}, commit {}, attempt {}, {} .. {}\n",
                           or_unknown(c.kernel_release), or_unknown(c.accelerator), or_unknown(c.source_commit),
                           c.attempt, c.started_unix_ns ? text::utc_text(*c.started_unix_ns) : "unknown",
                           c.ended_unix_ns ? text::utc_text(*c.ended_unix_ns) : "unknown");
  }
  return out;
}

/// The <testcase> of one assertion (write_junit in assertions.hpp).
void assertion_testcase(std::ostream& o, const std::string& suite, const AssertionResult& r,
                        const results::Provenance* prov) {
  o << "  <testcase classname=\"" << xml_text(suite) << "\" name=\"" << xml_text(r.name) << "\">\n";
  o << "    <properties>\n";
  provenance_properties(o, prov);
  junit_property(o, "kernel", distinct(r.runs, [](const CaseRun& c) { return c.kernel_release; }));
  junit_property(o, "accelerator", distinct(r.runs, [](const CaseRun& c) { return c.accelerator; }));
  junit_property(o, "source_commit", distinct(r.runs, [](const CaseRun& c) { return c.source_commit; }));
  std::optional<std::int64_t> first, last;
  for (const auto& c : r.runs) {
    if (c.started_unix_ns) first = std::min(first.value_or(*c.started_unix_ns), *c.started_unix_ns);
    if (c.ended_unix_ns) last = std::max(last.value_or(*c.ended_unix_ns), *c.ended_unix_ns);
  }
  junit_property(o, "first_case_started_utc", first ? text::utc_text(*first) : "unknown");
  junit_property(o, "last_case_ended_utc", last ? text::utc_text(*last) : "unknown");
  junit_property(o, "cases_checked", std::to_string(r.cases_checked));
  for (const auto& m : r.measured)
    junit_property(o, m.case_id + "." + m.quantity,
                   m.value ? fmt::format("{:.6g}", *m.value) + " " + m.unit : "not measured");
  o << "    </properties>\n";
  if (!r.passed) {
    std::string body;
    for (const auto& f : r.failures) body += f + "\n";
    o << "    <failure message=\"" << xml_text(r.failures.front()) << "\">" << xml_text(body) << "</failure>\n";
  }
  o << "    <system-out>" << xml_text(assertion_system_out(r)) << "</system-out>\n";
  o << "  </testcase>\n";
}

/// The <testcase> of one A/B regression metric (classname `<suite>.regression`).
void metric_testcase(std::ostream& o, const std::string& suite, const analysis::MetricComparison& m,
                     const results::Provenance* prov) {
  auto opt = [](std::optional<double> v) { return v ? fmt::format("{:.6g}", *v) : std::string("none"); };
  o << "  <testcase classname=\"" << xml_text(suite + ".regression") << "\" name=\"" << xml_text(m.metric) << "\">\n";
  o << "    <properties>\n";
  provenance_properties(o, prov);
  junit_property(o, "unit", m.unit);
  junit_property(o, "pairs", std::to_string(m.pairs));
  junit_property(o, "strata", std::to_string(m.strata));
  junit_property(o, "baseline_mean", opt(m.baseline_mean));
  junit_property(o, "candidate_mean", opt(m.candidate_mean));
  junit_property(o, "ratio", opt(m.ratio));
  junit_property(o, "lower", opt(m.lower));
  junit_property(o, "upper", opt(m.upper));
  junit_property(o, "level", fmt::format("{:.6g}", m.level));
  junit_property(o, "max_ratio", opt(m.max_ratio));
  junit_property(o, "min_ratio", opt(m.min_ratio));
  junit_property(o, "verdict", m.verdict);
  o << "    </properties>\n";
  const std::string msg = m.metric + ": " + m.detail;
  if (m.verdict == "regression")
    o << "    <failure message=\"" << xml_text(msg) << "\">" << xml_text(msg) << "</failure>\n";
  else if (m.verdict == "no data")
    o << "    <skipped message=\"" << xml_text(msg) << "\"/>\n";
  else if (m.verdict == "inconclusive")  // not decided: exit 5, and never shown as passed
    o << "    <skipped message=\"" << xml_text("inconclusive: " + msg) << "\"/>\n";
  o << "    <system-out>" << xml_text(m.verdict + ": " + msg + "\n") << "</system-out>\n";
  o << "  </testcase>\n";
}

/// The <testcase> of one extra case (JUnitExtraCase; classname `<suite>.<classname_suffix>`).
void extra_testcase(std::ostream& o, const std::string& suite, const JUnitExtraCase& x,
                    const results::Provenance* prov) {
  o << "  <testcase classname=\"" << xml_text(suite + "." + x.classname_suffix) << "\" name=\"" << xml_text(x.name)
    << "\">\n";
  o << "    <properties>\n";
  provenance_properties(o, prov);
  for (const auto& [k, v] : x.properties) junit_property(o, k, v);
  o << "    </properties>\n";
  if (!x.error.empty())
    o << "    <error message=\"" << xml_text(x.error) << "\">" << xml_text(x.error) << "</error>\n";
  else if (!x.failure.empty())
    o << "    <failure message=\"" << xml_text(x.failure) << "\">" << xml_text(x.failure) << "</failure>\n";
  o << "    <system-out>" << xml_text(x.system_out) << "</system-out>\n";
  o << "  </testcase>\n";
}

}  // namespace

void write_junit(const std::string& path, const std::string& suite, const std::vector<AssertionResult>& results,
                 const results::Provenance* prov, const std::vector<analysis::MetricComparison>* metrics,
                 const std::vector<JUnitExtraCase>* extra) {
  std::ofstream o(path);
  if (!o) throw std::runtime_error(path + ": cannot write JUnit XML");
  const JUnitCounts n = junit_counts(results, metrics, extra);
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>";
  // A synthetic DB's file says so on its first line (issue 59), in a comment after the declaration.
  if (prov && prov->synthetic) o << "<!-- " << xml_text(results::synthetic_banner()) << " -->";
  o << "\n";
  o << "<testsuite name=\"" << xml_text(suite) << "\" tests=\"" << n.tests << "\" failures=\"" << n.failures
    << "\" errors=\"" << n.errors << "\" skipped=\"" << n.skipped << "\"";
  if (prov && !prov->generated_utc.empty()) o << " timestamp=\"" << xml_text(prov->generated_utc) << "\"";
  o << ">\n";
  for (const auto& r : results) assertion_testcase(o, suite, r, prov);
  if (metrics)
    for (const auto& m : *metrics) metric_testcase(o, suite, m, prov);
  if (extra)
    for (const auto& x : *extra) extra_testcase(o, suite, x, prov);
  o << "</testsuite>\n";
  if (!o) throw std::runtime_error(path + ": write failed");
}

}  // namespace harness::campaign
