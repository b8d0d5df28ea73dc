// Per-case latency summaries (see case_summary.hpp).
#include "analysis/case_summary.hpp"

#include "analysis/quantile.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace analysis {

const char* config_name(Config c) {
  switch (c) {
    case Config::Static: return "static-zram";
    case Config::Delayed: return "delayed-activation";
    case Config::Reclaim: return "bounded-reclaim";
  }
  return "?";
}

const char* canary_name(Canary c) { return c == Canary::Compute ? "compute" : "sqlite"; }

std::optional<Config> parse_config(const std::string& s) {
  if (s == "static-zram") return Config::Static;
  if (s == "delayed-activation") return Config::Delayed;
  if (s == "bounded-reclaim") return Config::Reclaim;
  return std::nullopt;
}

LatencySummary summarize_requests(std::span<const RawRequest> reqs, std::int64_t start_ns,
                                  std::int64_t end_ns, std::int64_t period_ns) {
  LatencySummary s;
  std::vector<double> resp, wake, service;
  resp.reserve(reqs.size());
  wake.reserve(reqs.size());
  service.reserve(reqs.size());
  constexpr double inf = std::numeric_limits<double>::infinity();
  for (const auto& r : reqs) {
    if (r.scheduled_ns < start_ns || r.scheduled_ns >= end_ns) continue;
    ++s.requests;
    if (!r.completion_ns) {
      ++s.incomplete;
      ++s.deadline_misses;
      resp.push_back(inf);
      continue;
    }
    const std::int64_t rn = *r.completion_ns - r.scheduled_ns;
    if (rn <= 0) {
      if (s.nonpositive++ == 0) s.first_nonpositive_seq = r.seq;
    }
    if (*r.completion_ns > r.scheduled_ns + period_ns) ++s.deadline_misses;
    resp.push_back(static_cast<double>(rn) / 1000.0);
    if (r.wake_ns) {
      wake.push_back(static_cast<double>(*r.wake_ns - r.scheduled_ns) / 1000.0);
      service.push_back(static_cast<double>(*r.completion_ns - *r.wake_ns) / 1000.0);
    }
  }
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
