#pragma once
// What a request to the agent gave: its value, or which expected failure and why
// (docs/DESIGN.md "Errors": an expected failure is a value; the caller decides with it).
// The client (client.hpp) returns one Reply<T> per request; exceptions stay for what the
// caller cannot go on from (a bad URL or token file at construction, an invalid case id).
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace harness::agent {

/// Which outcome of a request failed (the agent's answers: harness/agent/API.md).
enum class FailureKind {
  Rejected,      ///< 400: the request was refused; Failure::field names the field when the agent says
  Unauthorised,  ///< 401: missing or wrong bearer token
  NotFound,      ///< 404: unknown case id or path
  Conflict,      ///< 409: busy with another case, case id already used, or bundle not ready
  NotQualified,  ///< 412: host not qualified or marked unclean; Failure::reasons
  Unreachable,   ///< no HTTP answer: connection refused, host not resolved, timeout, reset
  Untrusted,     ///< TLS: the agent's certificate or public key was refused; nothing was sent
  OtherStatus,   ///< any other HTTP status (403, 413, 5xx, ...): Failure::http_status
  BadAnswer,     ///< a success status whose body the client cannot read
};

/// "rejected", "unauthorised", "not_found", "conflict", "not_qualified", "unreachable",
/// "untrusted", "other_status", "bad_answer".
std::string_view to_string(FailureKind k);

/// One failed request.
struct Failure {
  FailureKind kind = FailureKind::Unreachable;
  int http_status = 0;               ///< the answer's status; 0 when there was none
  std::string message;               ///< one sentence naming the agent URL, the request and what to check
  std::string field;                 ///< Rejected: the offending field ("" when the agent named none)
  std::vector<std::string> reasons;  ///< NotQualified: the agent's reasons, in its order
};

/// The value of a request that returns nothing but success (cancel, bundle download).
struct Done {};

/// A request's value or its Failure. Reading the one it does not hold is a broken invariant
/// (the caller did not look at ok()): std::logic_error carrying the failure's message.
template <class T>
class [[nodiscard]] Reply {
 public:
  Reply(T value) : v_(std::move(value)) {}       // NOLINT(google-explicit-constructor): a value is a reply
  Reply(Failure f) : v_(std::move(f)) {}         // NOLINT(google-explicit-constructor): so is a failure
  bool ok() const { return v_.index() == 0; }
  /// True when the request failed with kind `k`.
  bool is(FailureKind k) const { return !ok() && std::get<1>(v_).kind == k; }
  const T& value() const& {
    require_value();
    return std::get<0>(v_);
  }
  T& value() & {
    require_value();
    return std::get<0>(v_);
  }
  T&& value() && {
    require_value();
    return std::get<0>(std::move(v_));
  }
  const Failure& failure() const {
    if (ok()) throw std::logic_error("agent reply: failure() of a request that succeeded");
    return std::get<1>(v_);
  }
  /// The failure's message; "" when the request succeeded.
  const std::string& message() const {
    static const std::string none;
    return ok() ? none : std::get<1>(v_).message;
  }

 private:
  void require_value() const {
    if (!ok()) throw std::logic_error("agent reply read as a success: " + std::get<1>(v_).message);
  }
  std::variant<T, Failure> v_;
};

}  // namespace harness::agent
