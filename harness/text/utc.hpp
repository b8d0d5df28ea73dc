#pragma once
// A moment as the text reports, JUnit properties and status lines print it.
#include <cstdint>
#include <string>

namespace harness::text {

/// `unix_ns` (ns since the Unix epoch) as ISO 8601 UTC to the second, "2026-12-05T09:44:56Z"
/// (the fraction of a second is dropped, not rounded).
std::string utc_text(std::int64_t unix_ns);

}  // namespace harness::text
