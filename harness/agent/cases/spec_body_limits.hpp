#pragma once
// The limits of a submitted case spec's JSON, judged on the raw body before it is parsed
// (API.md "Limits"; ours). A spec is a few dozen values whose longest string is a path (at
// most 4096 bytes, SPEC.md), but a 1 MiB body may hold a megabyte-long key or value, or
// half a million one-digit numbers: parsed, those took the agent's peak RSS (VmHWM) from
// 20 MiB to 25-26 MiB (a key or value) and 52 MiB (the numbers) for one request, and to
// 36-42 MiB and 166 MiB for four at once (measured on loopback, 2026-12-07). The scan allocates
// nothing but the path of the value it refuses, and names that value as the spec's errors
// name a field ("backend.swapfile_path", "variant.cmdline[2]").
#include <cstddef>
#include <string>
#include <string_view>

namespace harness::agent {

/// Longest string or object key of a spec, raw bytes between its quotes (ours: the longest
/// a spec needs is a path of 4096 bytes).
inline constexpr std::size_t kMaxSpecStringBytes = 4096;
/// Most values (objects, arrays, strings, numbers, true, false, null) in a spec (ours: the
/// specs the campaigns make have under 100).
inline constexpr std::size_t kMaxSpecValues = 10000;

/// A spec body judged by the limits: fine (malformed JSON included: the parser says what is
/// wrong), or which limit it breaks, where and why.
struct SpecBodyScan {
  enum class Verdict {
    Fine,
    StringTooLong,  ///< a string or key longer than kMaxSpecStringBytes
    TooManyValues,  ///< more than kMaxSpecValues values
  };
  Verdict verdict = Verdict::Fine;
  std::string field;  ///< the value's path ("backend.x... (1048000 bytes)" for a key); empty when Fine
  std::string why;    ///< the limit broken, with the string's excerpt and length; empty when Fine
  bool ok() const { return verdict == Verdict::Fine; }
};

/// Scans `body` (one pass; nothing but the refused value's path is allocated).
SpecBodyScan scan_spec_body(std::string_view body);

}  // namespace harness::agent
