// Names of the failure kinds of an agent reply (reply.hpp).
#include "harness/agent/client/reply.hpp"

namespace harness::agent {

std::string_view to_string(FailureKind k) {
  switch (k) {
    case FailureKind::Rejected: return "rejected";
    case FailureKind::Unauthorised: return "unauthorised";
    case FailureKind::NotFound: return "not_found";
    case FailureKind::Conflict: return "conflict";
    case FailureKind::NotQualified: return "not_qualified";
    case FailureKind::Unreachable: return "unreachable";
    case FailureKind::Untrusted: return "untrusted";
    case FailureKind::OtherStatus: return "other_status";
    case FailureKind::BadAnswer: return "bad_answer";
  }
  return "unknown";
}

}  // namespace harness::agent
