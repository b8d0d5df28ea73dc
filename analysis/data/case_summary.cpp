// Per-case latency summaries (see case_summary.hpp).
#include "analysis/data/case_summary.hpp"

#include "analysis/stats/quantile.hpp"

#include <algorithm>
#include <stdexcept>

namespace analysis {

const char* canary_name(Canary c) { return c == Canary::Compute ? "compute" : "sqlite"; }

namespace {
// Smallest k with origin + k x period >= t (k may be negative before clamping).
std::int64_t first_seq_at_or_after(std::int64_t t, std::int64_t origin, std::int64_t period) {
  const std::int64_t d = t - origin;
  return d >= 0 ? (d + period - 1) / period : -((-d) / period);
}
}  // namespace

LatencySummary summarize_requests(std::span<const RawRequest> reqs, const PhaseWindow& w) {
  if (w.period_ns <= 0) throw std::invalid_argument("canary period must be > 0 ns");
  LatencySummary s;
  std::vector<double> resp, wake, service;
  resp.reserve(reqs.size());
  wake.reserve(reqs.size());
  service.reserve(reqs.size());
  // Censored value (us): observation end - scheduled start, a lower bound of the response.
  auto censored_us = [&](std::int64_t scheduled_ns) {
    return static_cast<double>(w.observation_end_ns - scheduled_ns) / 1000.0;
  };
  std::vector<std::int64_t> recorded_seqs;  // sorted, unique (reqs come in seq order: no sort)
  recorded_seqs.reserve(reqs.size());
  for (const auto& r : reqs) {
    recorded_seqs.push_back(r.seq);
    if (r.scheduled_ns < w.start_ns || r.scheduled_ns >= w.end_ns) continue;
    ++s.requests;
    if (!r.completion_ns) {
      ++s.incomplete;
      ++s.deadline_misses;
      resp.push_back(censored_us(r.scheduled_ns));
      continue;
    }
    const std::int64_t rn = *r.completion_ns - r.scheduled_ns;
    if (rn <= 0) {
      if (s.nonpositive++ == 0) s.first_nonpositive_seq = r.seq;
    }
    if (*r.completion_ns > r.scheduled_ns + w.period_ns) ++s.deadline_misses;
    resp.push_back(static_cast<double>(rn) / 1000.0);
    if (r.wake_ns) {
      wake.push_back(static_cast<double>(*r.wake_ns - r.scheduled_ns) / 1000.0);
      service.push_back(static_cast<double>(*r.completion_ns - *r.wake_ns) / 1000.0);
    }
  }
  // Scheduled pressure-phase requests missing from the trace (truncated trace, seq gaps).
  const std::int64_t origin = reqs.empty() ? w.origin_ns : reqs.front().scheduled_ns - reqs.front().seq * w.period_ns;
  const std::int64_t lo = std::max<std::int64_t>(0, first_seq_at_or_after(w.start_ns, origin, w.period_ns));
  const std::int64_t hi = first_seq_at_or_after(w.end_ns, origin, w.period_ns);  // exclusive
  if (!std::is_sorted(recorded_seqs.begin(), recorded_seqs.end())) std::sort(recorded_seqs.begin(), recorded_seqs.end());
  for (std::int64_t q = lo; q < hi; ++q) {
    if (std::binary_search(recorded_seqs.begin(), recorded_seqs.end(), q)) continue;
    ++s.missing;
    ++s.requests;
    ++s.deadline_misses;
    resp.push_back(censored_us(origin + q * w.period_ns));
  }
  s.censored = s.incomplete + s.missing;
  s.truncated = s.missing > 0;
  if (s.requests == 0) throw std::invalid_argument("no canary request scheduled in the pressure phase");
  const double probs[] = {0.5, 0.95, 0.99};
  const auto q = quantiles7(resp, probs);
  s.p50_us = q[0];
  s.p95_us = q[1];
  s.p99_us = q[2];
  if (!wake.empty()) {
    const double p2[] = {0.5, 0.99};
    const auto w = quantiles7(wake, p2);
    const auto v = quantiles7(service, p2);
    s.wake_p50_us = w[0];
    s.wake_p99_us = w[1];
    s.service_p50_us = v[0];
    s.service_p99_us = v[1];
    s.has_wake = true;
  }
  return s;
}

}  // namespace analysis
