#pragma once
// The end of a case (harness/agent/API.md "A case's states", "Unclean restoration"): the
// verdict of its bundle, the unclean mark written durably before the result is reported,
// then the final state.
#include "harness/agent/cases/registry.hpp"
#include "harness/agent/cases/unclean_mark.hpp"

#include <memory>
#include <string>

namespace harness::agent {

/// After the executor of `c` exited with `exit_code` (reaped): reads its bundle
/// (read_bundle), writes the unclean mark when the verdict is unclean or unknown, then
/// publishes the bundle's state.
void finish_case(Registry& reg, UncleanMark& mark, const std::shared_ptr<CaseRec>& c, int exit_code);

/// A case that ends before its executor started: `state` Cancelled (cancelled while queued
/// or qualifying; cancel_requested is set) or InfraFailed (its files could not be written,
/// the executor could not be started), with `error`.
void end_unstarted(Registry& reg, const std::shared_ptr<CaseRec>& c, CaseState state, const std::string& error);

}  // namespace harness::agent
