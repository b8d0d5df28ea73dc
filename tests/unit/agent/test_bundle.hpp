#pragma once
// A bundle in the results schema for the agent's room tests: one cases row and, when asked,
// a restoration row (what `harness case run` writes at its end).
#include "results/db.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace agent_test {

/// Writes `path` holding case `id` with `status`; with `clean`, a restoration row with that
/// verdict and `problems` in its detail_json.
inline void write_bundle(const std::string& path, const std::string& id, const std::string& status,
                         std::optional<bool> clean = std::nullopt, const std::vector<std::string>& problems = {}) {
  results::Db db(path, results::Db::Mode::Create);
  results::Stmt st(db, "INSERT INTO cases(case_id,campaign,vm,regime,repeat,configuration,status,spec_json) "
                       "VALUES(?,'smoke','vm0','fast-structured',1,'static-zram',?,'{}')");
  st.bind(1, id).bind(2, status);
  st.run();
  if (!clean) return;
  results::Stmt r(db, "INSERT INTO restoration(case_id,start_ns,end_ns,clean,detail_json) VALUES(?,1,2,?,?)");
  r.bind(1, id);
  r.bind(2, static_cast<std::int64_t>(*clean ? 1 : 0));
  r.bind(3, nlohmann::json{{"verdict", {{"clean", *clean}, {"problems", problems}}}}.dump());
  r.run();
}

}  // namespace agent_test
