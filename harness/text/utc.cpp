// ISO 8601 UTC text (see utc.hpp).
#include "harness/text/utc.hpp"

#include <ctime>

namespace harness::text {

std::string utc_text(std::int64_t unix_ns) {
  std::int64_t s = unix_ns / 1'000'000'000;
  if (unix_ns % 1'000'000'000 < 0) --s;  // before 1970: the second the moment falls in
  const std::time_t t = static_cast<std::time_t>(s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return b;
}

}  // namespace harness::text
