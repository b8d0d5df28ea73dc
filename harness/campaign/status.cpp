// Campaign status report (see status.hpp).
#include "harness/campaign/status.hpp"

#include <fmt/format.h>

namespace harness::campaign {

std::string status_report(results::Db& db) {
  std::string out;
  {
    results::Stmt q(db, "SELECT key, value FROM campaign_meta WHERE key IN ('name','schedule_sha256') ORDER BY key");
    while (q.step()) out += fmt::format("{}: {}\n", q.text(0), q.text(1));
  }
  {
    results::Stmt q(db,
                    "SELECT count(*), sum(state='completed'), sum(state='infra_failed'), sum(state='pending'), "
                    "(SELECT count(*) FROM attempts) FROM schedule");
    q.step();
    out += fmt::format("cases: {} planned, {} completed, {} infra_failed, {} pending; {} attempts recorded\n",
                       q.int64(0), q.opt_int64(1).value_or(0), q.opt_int64(2).value_or(0), q.opt_int64(3).value_or(0),
                       q.int64(4));
  }
  {
    results::Stmt q(db,
                    "SELECT vm, count(*), sum(state='completed'), sum(state='infra_failed'), sum(state='pending') "
                    "FROM schedule GROUP BY vm ORDER BY vm");
    while (q.step())
      out += fmt::format("  {}: {} planned, {} completed, {} infra_failed, {} pending\n", q.text(0), q.int64(1),
                         q.int64(2), q.int64(3), q.int64(4));
  }
  {
    results::Stmt q(db,
                    "SELECT s.case_id, (SELECT count(*) FROM attempts a WHERE a.case_id = s.case_id), "
                    "(SELECT error FROM attempts a WHERE a.case_id = s.case_id ORDER BY attempt DESC LIMIT 1) "
                    "FROM schedule s WHERE s.state = 'infra_failed' ORDER BY s.ordinal");
    bool any = false;
    while (q.step()) {
      if (!any) out += "infra_failed:\n";
      any = true;
      out += fmt::format("  {} ({} attempts): {}\n", q.text(0), q.int64(1), q.opt_text(2).value_or(""));
    }
  }
  {
    results::Stmt q(db, "SELECT case_id FROM schedule WHERE state = 'pending' ORDER BY ordinal LIMIT 5");
    bool any = false;
    while (q.step()) {
      if (!any) out += "next pending:\n";
      any = true;
      out += "  " + q.text(0) + "\n";
    }
  }
  {  // Outcomes that are kept as they are (study): OOM and failed/partial reclaim.
    results::Stmt q(db,
                    "SELECT (SELECT count(DISTINCT case_id) FROM telemetry WHERE coalesce(bg_oom_kill,0) + "
                    "coalesce(fg_oom_kill,0) > 0), (SELECT count(*) FROM reclaim_actions WHERE write_errno != 0)");
    q.step();
    out += fmt::format("completed outcomes kept: {} case(s) with OOM kills, {} reclaim write(s) with errno != 0\n",
                       q.int64(0), q.int64(1));
  }
  return out;
}

}  // namespace harness::campaign
