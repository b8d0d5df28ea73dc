#pragma once
// What names a campaign DB and its attempts to the agents, and the marks the runner leaves on
// it: the DB's tag, the id each attempt is submitted under, a VM's unusable mark.
#include "results/db.hpp"

#include <string>

namespace harness::campaign {

/// The id a case is submitted under for attempt `attempt` (1-based):
/// "<case_id>.a<attempt>-<tag>" with this DB's db_tag. An agent answers 409 to a case id it
/// has already used (agent/API.md), every attempt must stay distinguishable, and an agent
/// that outlives a DB (a real VM, a guest kept up between runs) must never hand one DB's
/// result to another DB's run of the same campaign (the tag differs).
std::string agent_case_id(const std::string& case_id, int attempt, const std::string& tag);

/// Records (non-empty `why`) or clears (empty) that VM `vm` is unusable after an unclean
/// restoration: campaign_meta key "unusable:<vm>" (shown by `harness status`). Clearing a VM
/// without a mark writes nothing.
void set_unusable_mark(results::Db& db, const std::string& vm, const std::string& why);

/// 8 hex digits naming this campaign DB: campaign_meta.db_tag, drawn from the OS CSPRNG
/// when the plan is stored (or on first use in an older DB). Not part of the plan hash.
std::string db_tag(results::Db& db);

}  // namespace harness::campaign
