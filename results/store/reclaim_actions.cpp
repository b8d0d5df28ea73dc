// reclaim_actions (see reclaim_actions.hpp).
#include "results/store/reclaim_actions.hpp"

#include "results/store/columns.hpp"

namespace results {
namespace {

using store_columns::Column;
using store_columns::Presence;
using A = ReclaimActionRow;

/// reclaim_actions' columns in schema.sql order, case_id left out. The measurements after the
/// first six came with later versions of the executor (SPEC.md "Version 2 additions", schema
/// version 4): a file without them reads NULL.
const std::vector<Column<A>>& reclaim_columns() {
  constexpr auto later = Presence::added;
  static const std::vector<Column<A>> cols = {
      {"requested_bytes", &A::requested_bytes}, {"start_ns", &A::start_ns}, {"end_ns", &A::end_ns},
      {"duration_ns", &A::duration_ns}, {"write_errno", &A::write_errno}, {"pgsteal_before", &A::pgsteal_before, later},
      {"pgsteal_after", &A::pgsteal_after, later}, {"pgsteal_settled", &A::pgsteal_settled, later},
      {"pgscan_before", &A::pgscan_before, later}, {"pgscan_after", &A::pgscan_after, later},
      {"pgscan_settled", &A::pgscan_settled, later}, {"bg_current_before_bytes", &A::bg_current_before_bytes, later},
      {"bg_current_after_bytes", &A::bg_current_after_bytes, later}, {"achieved_bytes", &A::achieved_bytes},
      {"achieved_counter", &A::achieved_counter, later},
      {"concurrent_estimate_bytes", &A::concurrent_estimate_bytes, later},
      {"achieved_conservative_bytes", &A::achieved_conservative_bytes, later},
      {"achieved_settled_bytes", &A::achieved_settled_bytes, later}, {"write_cpu_us", &A::write_cpu_us, later}};
  return cols;
}

}  // namespace

std::vector<ReclaimActionRow> read_reclaim_actions(Db& db, const std::string& case_id) {
  Stmt q(db, "SELECT " + store_columns::select_list(db, "reclaim_actions", reclaim_columns()) +
                 " FROM reclaim_actions WHERE case_id = ?1 ORDER BY start_ns");
  q.bind(1, case_id);
  std::vector<ReclaimActionRow> out;
  while (q.step()) store_columns::read_row(q, 0, reclaim_columns(), out.emplace_back());
  return out;
}

std::int64_t failed_reclaim_writes(Db& db) {
  Stmt q(db, "SELECT count(*) FROM reclaim_actions WHERE write_errno != 0");
  q.step();
  return q.int64(0);
}

void insert_reclaim_actions(Db& db, const std::string& case_id, const std::vector<ReclaimActionRow>& rows) {
  Stmt q(db, store_columns::insert_sql("reclaim_actions", {"case_id"}, reclaim_columns()));
  for (const auto& r : rows) {
    q.bind(1, case_id);
    store_columns::bind_row(q, 2, reclaim_columns(), r);
    q.run();
  }
}

}  // namespace results
