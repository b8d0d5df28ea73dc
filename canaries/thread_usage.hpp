#pragma once
// Per-request resource counters of the canaries (docs/DESIGN.md "Canaries": minor/major
// faults and voluntary/involuntary context switches as getrusage RUSAGE_THREAD deltas).
#include <cstdint>

namespace canaries {

/// One getrusage reading (counts since the thread started).
struct UsageSample {
  std::int64_t minflt = 0;  ///< minor page faults (ru_minflt)
  std::int64_t majflt = 0;  ///< major page faults (ru_majflt): needed I/O, e.g. swap-in
  std::int64_t nvcsw = 0;   ///< voluntary context switches (ru_nvcsw)
  std::int64_t nivcsw = 0;  ///< involuntary context switches (ru_nivcsw)
};

/// Source of usage samples; injectable for unit tests.
class UsageSource {
 public:
  virtual ~UsageSource() = default;
  virtual UsageSample sample() = 0;
};

/// getrusage(RUSAGE_THREAD) of the calling thread. Throws std::system_error on failure.
class ThreadUsage final : public UsageSource {
 public:
  UsageSample sample() override;
};

/// b - a, field by field.
UsageSample usage_delta(const UsageSample& a, const UsageSample& b);

}  // namespace canaries
