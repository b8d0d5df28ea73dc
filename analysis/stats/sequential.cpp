// The sequential A/B check (see sequential.hpp).
#include "analysis/stats/sequential.hpp"

#include "analysis/stats/bootstrap.hpp"

#include <stdexcept>

namespace analysis {

LookSchedule look_schedule(int first, int cap) {
  if (first < 1 || cap < first)
    throw std::invalid_argument("look_schedule: needs 1 <= first (" + std::to_string(first) + ") <= cap (" +
                                std::to_string(cap) + ")");
  LookSchedule s;
  for (int r = first; r < cap; r += first) s.repeats.push_back(r);
  s.repeats.push_back(cap);
  return s;
}

bool sequential_stop(const std::vector<MetricComparison>& metrics) {
  bool all = true;
  for (const auto& m : metrics) {
    if (m.verdict == "regression") return true;
    if ((m.max_ratio || m.min_ratio) && m.verdict != "ok-decided") all = false;
  }
  return all;
}

SequentialOutcome run_sequential(const RegressionMetric& m, const MetricPairs& p, const LookSchedule& s,
                                 std::optional<double> max_ratio, std::optional<double> min_ratio, double alpha,
                                 int metrics, const BootstrapOptions& bo) {
  if (p.repeat.size() != p.rows.size())
    throw std::invalid_argument(std::string("run_sequential: ") + m.name + ": every row needs its repeat");
  if (!max_ratio && !min_ratio) throw std::invalid_argument(std::string("run_sequential: ") + m.name + ": no tolerance");
  const double level = comparison_level(alpha, metrics, s.looks());
  SequentialOutcome o;
  for (int k = 0; k < s.looks(); ++k) {
    MetricPairs at;
    for (std::size_t i = 0; i < p.rows.size(); ++i)
      if (p.repeat[i] <= s.repeats[static_cast<std::size_t>(k)]) {
        at.rows.push_back(p.rows[i]);
        at.stratum.push_back(p.stratum[i]);
        at.repeat.push_back(p.repeat[i]);
      }
    o.look = k + 1;
    o.pairs = static_cast<int>(at.rows.size());
    o.at_stop = compare_pairs(m, at, max_ratio, min_ratio, level, bo, VerdictRule::decide);
    o.verdict = o.at_stop.verdict == "no data" ? "inconclusive" : o.at_stop.verdict;
    if (o.verdict == "regression" || o.verdict == "ok-decided") return o;
  }
  return o;
}

}  // namespace analysis
