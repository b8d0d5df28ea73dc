#pragma once
// JSON text parsed with limits on its size and nesting depth (ours).
//
// nlohmann's parser itself is iterative, but copying, dumping and comparing a value
// recurse once per nesting level: a 200 KB document nested 100,000 deep parses and then
// overflows the stack at the first copy. Every JSON input of the harness (case specs,
// agent answers and state files, bundle and campaign-DB columns, plans, qualification
// reports, VM owner/meta files) is therefore read through parse() below, which checks
// both limits on the raw text (an O(n) scan that skips strings) before nlohmann builds
// anything. Errors never quote raw input bytes: anything outside printable ASCII is
// shown as \xNN, so an error message can itself be sent as JSON.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "harness/error/expected.hpp"

namespace harness::json {

/// Limits of one parse. The defaults suit every document the harness reads.
struct Limits {
  std::size_t max_bytes = std::size_t{16} << 20;  ///< bytes of JSON text (16 MiB)
  std::size_t max_depth = 64;                     ///< nested arrays/objects: "[[1]]" has depth 2
};

/// The default limits (what parse() uses when given none).
inline constexpr Limits kDefaultLimits{};

/// A document that exceeds a limit or is not JSON. what() names the source, the limit
/// (with its value) or the parse error (with its byte offset).
class Error : public std::runtime_error {
 public:
  enum class Kind { TooLarge, TooDeep, Malformed, Unreadable };
  Error(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

/// Whether `text` keeps `limits`, or the Problem: "is 20000000 bytes (limit 16777216)" or
/// "nests arrays/objects deeper than 64 levels (limit 64) at byte 64". Strings (with their
/// escapes) are skipped; no allocation unless a limit is broken.
Checked check_limits(std::string_view text, const Limits& limits = kDefaultLimits);

/// Parses `text`, checking `limits` first. Throws Error: "<source>: JSON <problem>" for a
/// broken limit, "<source>: malformed JSON: <nlohmann's message>" otherwise (this covers
/// syntax errors, invalid UTF-8 and numbers out of range such as 1e400).
nlohmann::json parse(std::string_view text, std::string_view source, const Limits& limits = kDefaultLimits);

/// As parse(), but returns a discarded value (is_discarded()) instead of throwing: the
/// drop-in for nlohmann's `parse(text, nullptr, false)`.
nlohmann::json parse_or_discarded(std::string_view text, const Limits& limits = kDefaultLimits);

/// Reads `path` (at most limits.max_bytes + 1 bytes: a larger file is refused unread)
/// and parses it. Throws Error (Unreadable naming the path and errno text, or as parse()).
nlohmann::json parse_file(const std::string& path, const Limits& limits = kDefaultLimits);

/// `s` with every byte outside printable ASCII (and the backslash) written as \xNN, cut
/// to `max` bytes of input with "..." after it: safe in a log line or a JSON string.
std::string printable(std::string_view s, std::size_t max = 200);

/// The longest piece of a request value a message quotes (bytes; ours, harness/agent/API.md).
inline constexpr std::size_t kExcerptBytes = 64;

/// `s` as a message quotes a value of the input (a key, a name): whole when it has at most
/// `max` bytes, else its first `max` bytes and "... (N bytes)" with its whole length, so a
/// message about a megabyte-long key stays short. The bytes are kept as they are (printable(),
/// or the agent's answer, escapes them once).
std::string excerpt(std::string_view s, std::size_t max = kExcerptBytes);

}  // namespace harness::json
