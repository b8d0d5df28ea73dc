// The DB's tag, attempt ids and unusable marks (see db_identity.hpp).
#include "harness/campaign/store/db_identity.hpp"

#include "harness/agent/http/token.hpp"
#include "results/store/meta.hpp"

namespace harness::campaign {

std::string agent_case_id(const std::string& case_id, int attempt, const std::string& tag) {
  return case_id + ".a" + std::to_string(attempt) + (tag.empty() ? "" : "-" + tag);
}

void set_unusable_mark(results::Db& db, const std::string& vm, const std::string& why) {
  if (why.empty())
    results::clear_unusable_mark(db, vm);  // before every case of a reused guest: usually no mark, no write
  else
    results::put_unusable_mark(db, vm, why);
}

std::string db_tag(results::Db& db) {
  if (auto t = results::meta_value(db, "db_tag")) return *t;
  const std::string t = harness::agent::random_token().substr(0, 8);
  results::put_meta(db, "db_tag", t);
  return t;
}

}  // namespace harness::campaign
