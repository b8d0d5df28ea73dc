// CI assertion evaluation and JUnit XML (see assertions.hpp).
#include "harness/campaign/assertions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>

namespace harness::campaign {
namespace {

std::string num(double v) { return fmt::format("{:g}", v); }

/// Hyndman-Fan type 7 quantile (numpy's default) of sorted `v`, 0 <= p <= 1.
double quantile7(const std::vector<double>& v, double p) {
  const double h = (static_cast<double>(v.size()) - 1) * p;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (h - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

std::vector<std::string> completed_cases(results::Db& db, const std::string& where = "1") {
  std::vector<std::string> out;
  results::Stmt q(db, "SELECT s.case_id FROM schedule s JOIN cases c USING(case_id) WHERE s.state = 'completed' AND " +
                          where + " ORDER BY s.ordinal");
  while (q.step()) out.push_back(q.text(0));
  return out;
}

AssertionResult evaluate(results::Db& db, const Assertion& a) {
  AssertionResult r;
  r.name = a.kind + (a.min ? " >= " + num(*a.min) : "") + (a.max ? " <= " + num(*a.max) : "");
  if (a.kind == "all_cases_completed") {
    results::Stmt q(db, "SELECT case_id, state FROM schedule ORDER BY ordinal");
    while (q.step()) {
      ++r.cases_checked;
      if (q.text(1) != "completed") {
        std::string why = q.text(1);
        results::Stmt e(db, "SELECT error FROM attempts WHERE case_id = ?1 ORDER BY attempt DESC LIMIT 1");
        e.bind(1, q.text(0));
        if (e.step() && !e.is_null(0)) why += ": " + e.text(0);
        r.failures.push_back(q.text(0) + ": " + why);
      }
    }
  } else if (a.kind == "reclaim_achieved_ratio" || a.kind == "reclaim_duration_s") {
    for (const auto& id : completed_cases(db, "s.configuration = 'bounded-reclaim'")) {
      ++r.cases_checked;
      results::Stmt q(db,
                      "SELECT requested_bytes, achieved_bytes, duration_ns, write_errno FROM reclaim_actions "
                      "WHERE case_id = ?1 ORDER BY start_ns");
      q.bind(1, id);
      if (!q.step()) {
        r.failures.push_back(id + ": no reclaim action (trigger never fired?)");
        continue;
      }
      if (a.kind == "reclaim_achieved_ratio") {
        if (q.is_null(1)) {
          r.failures.push_back(id + ": achieved_bytes not measured");
          continue;
        }
        const double ratio = static_cast<double>(q.int64(1)) / static_cast<double>(q.int64(0));
        if (!(ratio >= *a.min))
          r.failures.push_back(fmt::format("{}: achieved {:.3f} of the request ({} of {} bytes, errno {})", id, ratio,
                                           q.int64(1), q.int64(0), q.int64(3)));
      } else {
        const double s = static_cast<double>(q.int64(2)) / 1e9;
        if (!(s <= *a.max)) r.failures.push_back(fmt::format("{}: memory.reclaim write took {:.3f} s", id, s));
      }
    }
  } else if (a.kind == "trigger_within_s") {
    for (const auto& id : completed_cases(db)) {
      ++r.cases_checked;
      results::Stmt q(db,
                      "SELECT (SELECT min(t_ns) FROM controller_events WHERE case_id = ?1 AND kind IN "
                      "('trigger','would_trigger')), (SELECT start_ns FROM phases WHERE case_id = ?1 AND phase = "
                      "'pressure')");
      q.bind(1, id);
      q.step();
      if (q.is_null(0)) {
        r.failures.push_back(id + ": trigger never fired");
      } else if (q.is_null(1)) {
        r.failures.push_back(id + ": no pressure phase recorded");
      } else {
        const double s = static_cast<double>(q.int64(0) - q.int64(1)) / 1e9;
        if (!(s <= *a.max))
          r.failures.push_back(fmt::format("{}: trigger fired {:.1f} s after the pressure phase began", id, s));
      }
    }
  } else if (a.kind == "restoration_clean") {
    for (const auto& id : completed_cases(db)) {
      ++r.cases_checked;
      results::Stmt q(db, "SELECT clean, detail_json FROM restoration WHERE case_id = ?1");
      q.bind(1, id);
      if (!q.step()) r.failures.push_back(id + ": no restoration record");
      else if (q.int64(0) != 1)
        r.failures.push_back(id + ": restoration not clean: " + q.opt_text(1).value_or("(no detail)").substr(0, 300));
    }
  } else if (a.kind == "no_foreground_oom") {
    for (const auto& id : completed_cases(db)) {
      ++r.cases_checked;
      results::Stmt q(db, "SELECT count(fg_oom_kill), max(fg_oom_kill) FROM telemetry WHERE case_id = ?1");
      q.bind(1, id);
      q.step();
      if (q.int64(0) == 0) r.failures.push_back(id + ": fg memory.events oom_kill never measured");
      else if (q.int64(1) > 0) r.failures.push_back(fmt::format("{}: {} foreground OOM kill(s)", id, q.int64(1)));
    }
  } else if (a.kind == "canary_p99_ms") {
    for (const auto& id : completed_cases(db)) {
      ++r.cases_checked;
      for (const char* canary : {"compute", "sqlite"}) {
        // Requests whose scheduled start lies in the pressure phase (study: primary outcome);
        // a request that never completed counts as infinitely late.
        results::Stmt q(db,
                        "SELECT r.completion_ns - r.scheduled_ns FROM canary_requests r JOIN phases p ON p.case_id = "
                        "r.case_id AND p.phase = 'pressure' WHERE r.case_id = ?1 AND r.canary = ?2 AND "
                        "r.scheduled_ns >= p.start_ns AND (p.end_ns IS NULL OR r.scheduled_ns < p.end_ns)");
        q.bind(1, id).bind(2, canary);
        std::vector<double> v;
        while (q.step()) v.push_back(q.is_null(0) ? INFINITY : static_cast<double>(q.int64(0)) / 1e6);
        if (v.empty()) {
          r.failures.push_back(id + ": no " + canary + " requests in the pressure phase");
          continue;
        }
        std::sort(v.begin(), v.end());
        const double p99 = quantile7(v, 0.99);
        if (!(p99 <= *a.max)) r.failures.push_back(fmt::format("{}: {} p99 {:.2f} ms", id, canary, p99));
      }
    }
  } else {
    r.failures.push_back("unknown assertion kind " + a.kind);
  }
  if (r.cases_checked == 0 && a.kind != "all_cases_completed") r.failures.push_back("no completed case to check");
  r.passed = r.failures.empty();
  return r;
}

std::string xml_escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    switch (ch) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\n' && ch != '\t') o += ' ';
        else o += ch;
    }
  }
  return o;
}

}  // namespace

std::vector<AssertionResult> evaluate_assertions(results::Db& db, const Campaign& c) {
  std::vector<AssertionResult> out;
  for (const auto& a : c.assertions) out.push_back(evaluate(db, a));
  return out;
}

void write_junit(const std::string& path, const std::string& suite, const std::vector<AssertionResult>& results) {
  std::ofstream o(path);
  if (!o) throw std::runtime_error(path + ": cannot write JUnit XML");
  int failures = 0;
  for (const auto& r : results) failures += r.passed ? 0 : 1;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o << "<testsuite name=\"" << xml_escape(suite) << "\" tests=\"" << results.size() << "\" failures=\"" << failures
    << "\" errors=\"0\">\n";
  for (const auto& r : results) {
    o << "  <testcase classname=\"" << xml_escape(suite) << "\" name=\"" << xml_escape(r.name) << "\">\n";
    if (!r.passed) {
      std::string body;
      for (const auto& f : r.failures) body += f + "\n";
      o << "    <failure message=\"" << xml_escape(r.failures.front()) << "\">" << xml_escape(body) << "</failure>\n";
    }
    o << "    <system-out>" << r.cases_checked << " case(s) checked</system-out>\n";
    o << "  </testcase>\n";
  }
  o << "</testsuite>\n";
  if (!o) throw std::runtime_error(path + ": write failed");
}

}  // namespace harness::campaign
