// The narrower questions asked of cases (see case_queries.hpp).
#include "results/store/case_queries.hpp"

namespace results {
namespace {

/// The first column of every row of `q` (text).
std::vector<std::string> first_texts(Stmt& q) {
  std::vector<std::string> out;
  while (q.step()) out.push_back(q.text(0));
  return out;
}

/// The first column of every row of `sql`, NULL left out.
std::vector<std::string> distinct_texts(Db& db, const char* sql) {
  std::vector<std::string> out;
  Stmt q(db, sql);
  while (q.step())
    if (!q.is_null(0)) out.push_back(q.text(0));
  return out;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> case_statuses(Db& db) {
  std::vector<std::pair<std::string, std::string>> out;
  Stmt q(db, "SELECT case_id, status FROM cases ORDER BY case_id");
  while (q.step()) out.emplace_back(q.text(0), q.text(1));
  return out;
}

std::vector<std::string> completed_case_ids(Db& db) {
  Stmt q(db, "SELECT case_id FROM cases WHERE status = 'completed' ORDER BY case_id");
  return first_texts(q);
}

std::vector<std::string> uncompleted_case_ids(Db& db, const std::string& configuration) {
  Stmt q(db, "SELECT case_id FROM cases WHERE status <> 'completed' AND configuration = ?1");
  q.bind(1, configuration);
  return first_texts(q);
}

std::vector<std::string> completed_scheduled_case_ids(Db& db, const std::string& completed,
                                                      const std::optional<std::string>& configuration) {
  Stmt q(db, "SELECT s.case_id FROM schedule s JOIN cases c USING(case_id) WHERE s.state = ?1 AND "
             "(?2 IS NULL OR s.configuration = ?2) ORDER BY s.ordinal");
  q.bind(1, completed).bind(2, configuration);
  return first_texts(q);
}

std::vector<std::pair<std::string, std::optional<std::string>>> scheduled_outcomes(Db& db, const std::string& state) {
  Stmt q(db, "SELECT s.case_id, c.outcome_json FROM schedule s LEFT JOIN cases c ON c.case_id = s.case_id "
             "WHERE s.state = ?1 ORDER BY s.ordinal");
  q.bind(1, state);
  std::vector<std::pair<std::string, std::optional<std::string>>> out;
  while (q.step()) out.emplace_back(q.text(0), q.opt_text(1));
  return out;
}

std::vector<std::pair<std::string, std::string>> case_configurations_by_id(Db& db) {
  std::vector<std::pair<std::string, std::string>> out;
  Stmt q(db, "SELECT case_id, configuration FROM cases");
  while (q.step()) out.emplace_back(q.text(0), q.text(1));
  return out;
}

std::vector<std::string> case_configurations(Db& db) {
  Stmt q(db, "SELECT DISTINCT configuration FROM cases");
  return first_texts(q);
}

std::vector<std::string> case_and_schedule_regimes(Db& db) {
  Stmt q(db, "SELECT DISTINCT regime FROM cases");
  std::vector<std::string> out = first_texts(q);
  if (has_table(db, "schedule")) {
    Stmt s(db, "SELECT DISTINCT regime FROM schedule");
    for (auto& r : first_texts(s)) out.push_back(std::move(r));
  }
  return out;
}

std::vector<std::string> case_accelerators(Db& db) {
  return distinct_texts(db, "SELECT DISTINCT accelerator FROM cases ORDER BY 1");
}

std::vector<std::string> case_kernel_releases(Db& db) {
  return distinct_texts(db, "SELECT DISTINCT kernel_release FROM cases ORDER BY 1");
}

std::vector<std::string> case_commits(Db& db) {
  return distinct_texts(db,
                        "SELECT DISTINCT source_commit || CASE WHEN source_dirty = 1 THEN '-dirty' "
                        "ELSE '' END FROM cases ORDER BY 1");
}

std::vector<std::string> case_campaigns(Db& db) {
  return distinct_texts(db, "SELECT DISTINCT campaign FROM cases ORDER BY 1");
}

bool has_case_with_commit(Db& db, const std::string& commit) {
  Stmt q(db, "SELECT EXISTS(SELECT 1 FROM cases WHERE source_commit = ?1)");
  q.bind(1, commit);
  return q.step() && q.int64(0) == 1;
}

std::vector<CaseKernel> case_kernels(Db& db) {
  std::vector<CaseKernel> out;
  Stmt q(db,
         "SELECT case_id, CASE WHEN json_valid(spec_json) THEN json_extract(spec_json, '$.variant.name') END, "
         "kernel_release, CASE WHEN json_valid(environment_json) THEN json_extract(environment_json, "
         "'$.uname.version') END, CASE WHEN json_valid(environment_json) THEN json_extract(environment_json, "
         "'$.uname.machine') END, accelerator, started_unix_ns, ended_unix_ns FROM cases ORDER BY case_id");
  while (q.step()) {
    CaseKernel k;
    k.case_id = q.text(0);
    k.variant = q.opt_text(1).value_or("");
    k.release = q.opt_text(2).value_or("");
    k.version = q.opt_text(3).value_or("");
    k.machine = q.opt_text(4).value_or("");
    k.accelerator = q.opt_text(5).value_or("");
    k.started_unix_ns = q.opt_int64(6);
    k.ended_unix_ns = q.opt_int64(7);
    out.push_back(std::move(k));
  }
  return out;
}

std::vector<std::optional<std::string>> completed_kernel_releases(Db& db, const std::string& configuration) {
  Stmt q(db, "SELECT DISTINCT kernel_release FROM cases WHERE status = 'completed' AND "
             "configuration = ?1 ORDER BY kernel_release");
  q.bind(1, configuration);
  std::vector<std::optional<std::string>> out;
  while (q.step()) out.push_back(q.opt_text(0));
  return out;
}

TripletCases triplet_cases(Db& db) {
  Stmt q(db, "SELECT COUNT(*), MIN(case_id) FROM cases WHERE triplet_id IS NOT NULL");
  if (!q.step()) return {};
  return {q.int64(0), q.opt_text(1)};
}

CaseCampaigns case_campaigns_with_status(Db& db, const std::string& status) {
  Stmt q(db, "SELECT count(*), count(DISTINCT campaign), group_concat(DISTINCT campaign) FROM cases "
             "WHERE status = ?1");
  q.bind(1, status);
  q.step();
  return {q.int64(0), q.int64(1), q.opt_text(2)};
}

std::int64_t count_variant_cases(Db& db, const std::string& status, const std::string& variant) {
  Stmt q(db, "SELECT count(*) FROM cases WHERE status = ?1 AND json_extract(spec_json, '$.variant.name') = ?2");
  q.bind(1, status).bind(2, variant);
  q.step();
  return q.int64(0);
}

OvercommittedCases overcommitted_cases(Db& db) {
  if (!has_column(db, "cases", "overcommitted")) return {};
  Stmt q(db, "SELECT count(*), group_concat(DISTINCT host_uri) FROM cases WHERE overcommitted = 1");
  if (!q.step()) return {};
  return {q.int64(0), q.opt_text(1)};
}

std::int64_t case_count(Db& db) {
  Stmt q(db, "SELECT count(*) FROM cases");
  q.step();
  return q.int64(0);
}

}  // namespace results
