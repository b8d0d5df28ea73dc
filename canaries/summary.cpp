#include "canaries/summary.hpp"

#include "canaries/percentile.hpp"
#include "canaries/timing.hpp"

#include <algorithm>
#include <vector>

namespace canaries {
namespace {

nlohmann::json stats_us(std::vector<double> v) {
  nlohmann::json j;
  if (v.empty()) {
    j["p50"] = j["p95"] = j["p99"] = j["max"] = nullptr;
    return j;
  }
  std::sort(v.begin(), v.end());
  j["p50"] = quantile_type7_sorted(v, 0.50);
  j["p95"] = quantile_type7_sorted(v, 0.95);
  j["p99"] = quantile_type7_sorted(v, 0.99);
  j["max"] = v.back();
  return j;
}

}  // namespace

nlohmann::json summarize(const TraceHeader& h, std::span<const TraceRecord> records) {
  std::vector<double> wake, service, response;
  wake.reserve(records.size());
  service.reserve(records.size());
  response.reserve(records.size());
  std::uint64_t misses = 0, incomplete = 0;
  std::int64_t minflt = 0, majflt = 0, nvcsw = 0, nivcsw = 0;
  for (const TraceRecord& r : records) {
    minflt += r.minflt;
    majflt += r.majflt;
    nvcsw += r.nvcsw;
    nivcsw += r.nivcsw;
    if (r.completion_ns == 0) {
      ++incomplete;
      continue;
    }
    wake.push_back(static_cast<double>(wake_delay_ns(r.scheduled_ns, r.wake_ns)) / 1e3);
    service.push_back(static_cast<double>(service_time_ns(r.wake_ns, r.completion_ns)) / 1e3);
    response.push_back(static_cast<double>(response_time_ns(r.scheduled_ns, r.completion_ns)) / 1e3);
    if (is_deadline_miss(r.scheduled_ns, h.period_ns, r.completion_ns)) ++misses;
  }
  nlohmann::json j;
  j["canary"] = h.canary;
  j["period_ms"] = static_cast<double>(h.period_ns) / 1e6;
  j["requests_recorded"] = records.size();
  j["requests_not_recorded"] = h.not_recorded;
  j["incomplete"] = incomplete;
  j["deadline_misses"] = misses;
  j["wake_delay_us"] = stats_us(std::move(wake));
  j["service_time_us"] = stats_us(std::move(service));
  j["response_time_us"] = stats_us(std::move(response));
  j["minflt"] = minflt;
  j["majflt"] = majflt;
  j["nvcsw"] = nvcsw;
  j["nivcsw"] = nivcsw;
  return j;
}

}  // namespace canaries
