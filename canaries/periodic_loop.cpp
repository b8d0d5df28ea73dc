#include "canaries/periodic_loop.hpp"

#include <stdexcept>

namespace canaries {

LoopResult run_periodic(const Schedule& s, Clock& clock, UsageSource& usage, TraceBuffer& trace,
                        const RequestFn& request, const std::function<bool()>& stop) {
  if (s.period_ns <= 0) throw std::invalid_argument("run_periodic: period_ns must be > 0");
  LoopResult result;
  for (std::uint64_t seq = 0; seq < s.requests; ++seq) {
    if (stop()) {
      result.stopped = true;
      return result;
    }
    const std::int64_t scheduled = s.start_ns(seq);
    while (!clock.sleep_until_ns(scheduled)) {
      if (stop()) {
        result.stopped = true;
        return result;
      }
    }
    TraceRecord r;
    r.seq = seq;
    r.scheduled_ns = scheduled;
    r.wake_ns = clock.now_ns();
    const UsageSample before = usage.sample();
    request(seq);
    r.completion_ns = clock.now_ns();
    const UsageSample delta = usage_delta(before, usage.sample());
    r.minflt = delta.minflt;
    r.majflt = delta.majflt;
    r.nvcsw = delta.nvcsw;
    r.nivcsw = delta.nivcsw;
    trace.push(r);
    ++result.requests_run;
  }
  return result;
}

}  // namespace canaries
