#pragma once
// The campaign database (results/schema.sql, WAL), as the campaign's rules use it: the stored
// plan (plan_store.hpp), the state of every planned case (progress.hpp), every attempt
// (attempts.hpp), the import of a bundle (import.hpp), a lost case (lost.hpp), the operator's
// actions (operator_actions.hpp) and the DB's identity and marks (db_identity.hpp); this header
// includes them all. The rows themselves are read and written through the store (results/store/).
// Rules (study, docs/PROTOCOL.md): a completed or lost case is never run again; only
// infra_failed cases are retried; every attempt is recorded; one transaction per imported bundle,
// with schedule.state and the attempts row updated in that same transaction.
#include "harness/campaign/store/attempts.hpp"
#include "harness/campaign/store/db_identity.hpp"
#include "harness/campaign/store/import.hpp"
#include "harness/campaign/store/lost.hpp"
#include "harness/campaign/store/operator_actions.hpp"
#include "harness/campaign/store/plan_store.hpp"
#include "harness/campaign/store/progress.hpp"
#include "harness/campaign/store/states.hpp"
#include "results/store/case_queries.hpp"

namespace harness::campaign {

/// The guest kernel each case recorded, for the KCIDB file of `harness check`
/// (check/check_kcidb.hpp), read by the store (results/store/case_queries.hpp).
using results::CaseKernel;
using results::case_kernels;

}  // namespace harness::campaign
