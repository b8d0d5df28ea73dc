// The end of a case (see case_end.hpp).
#include "harness/agent/cases/case_end.hpp"

#include "harness/agent/cases/bundle_outcome.hpp"

namespace harness::agent {

void finish_case(Registry& reg, UncleanMark& mark, const std::shared_ptr<CaseRec>& c, int exit_code) {
  const BundleOutcome o = read_bundle(c->id, bundle_path(*c), exit_code);
  if (o.unclean) mark.write(c->id, o.problems);  // durable before the result is reported
  reg.publish_final(c, o.state, o.error, exit_code, o.restoration);
}

void end_unstarted(Registry& reg, const std::shared_ptr<CaseRec>& c, CaseState state, const std::string& error) {
  if (state == CaseState::Cancelled) {
    std::lock_guard<std::mutex> lk(reg.mu);
    c->cancel_requested = true;
  }
  reg.publish_final(c, state, error, -1, nullptr);
}

}  // namespace harness::agent
