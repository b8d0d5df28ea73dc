#include "canaries/thread_usage.hpp"

#include <sys/resource.h>

#include <cerrno>
#include <system_error>

namespace canaries {

UsageSample ThreadUsage::sample() {
  rusage ru{};
  if (getrusage(RUSAGE_THREAD, &ru) != 0) {
    throw std::system_error(errno, std::generic_category(), "getrusage(RUSAGE_THREAD)");
  }
  return UsageSample{ru.ru_minflt, ru.ru_majflt, ru.ru_nvcsw, ru.ru_nivcsw};
}

UsageSample usage_delta(const UsageSample& a, const UsageSample& b) {
  return UsageSample{b.minflt - a.minflt, b.majflt - a.majflt, b.nvcsw - a.nvcsw, b.nivcsw - a.nivcsw};
}

}  // namespace canaries
