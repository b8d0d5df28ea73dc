// The current request's flags, on the connection's thread (see request_flags.hpp).
#include "harness/agent/http/request_flags.hpp"

namespace harness::agent {

thread_local RequestFlags* tl_flags = nullptr;

void mark_body_consumed() {
  if (tl_flags) tl_flags->body_consumed = true;
}

void close_after_response() {
  if (tl_flags) tl_flags->close_after = true;
}

bool body_deadline_passed() { return tl_flags && tl_flags->body_timed_out; }

bool body_over_raw_limit() { return tl_flags && tl_flags->body_over_budget; }

BodyFraming body_framing() { return tl_flags ? tl_flags->framing : BodyFraming{}; }

}  // namespace harness::agent
