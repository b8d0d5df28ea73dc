// `harness mark-infra` and `harness reset-infra` (infra_command.hpp).
#include "harness/campaign/commands/infra_command.hpp"

#include "harness/campaign/store/campaign_db.hpp"

#include <cstdlib>
#include <stdexcept>
#include <unistd.h>

namespace harness::campaign {

std::string operator_name() {
  if (const char* u = std::getenv("USER"); u && *u) return u;
  return "uid " + std::to_string(::getuid());
}

CommandOutcome mark_infra_command(results::Db& db, const std::string& case_id, const std::string& reason,
                                  bool override_outcome, const CommandEnv& env) {
  try {
    const auto prev = mark_infra(db, case_id, reason, operator_name(), override_outcome);
    std::fprintf(env.out, "%s: %s -> infra_failed (marked by %s%s); the next `harness run` reruns it\n",
                 case_id.c_str(), prev.c_str(), operator_name().c_str(),
                 prev == "completed" || prev == "lost" ? ", outcome overridden: the original is kept in the audit" : "");
    return CommandOutcome::ok;
  } catch (const std::invalid_argument& e) {  // refused (mark_infra): said, nothing changed
    std::fprintf(env.err, "harness: %s\n", e.what());
    return CommandOutcome::could_not_run;
  }
}

CommandOutcome reset_infra_command(results::Db& db, const std::string& case_id, const std::string& reason,
                                   const CommandEnv& env) {
  try {
    const auto ids = reset_infra(db, case_id, reason, operator_name());
    for (const auto& x : ids) std::fprintf(env.out, "%s: retry budget reset (by %s)\n", x.c_str(), operator_name().c_str());
    std::fprintf(env.out, "%zu case(s) reset; the next `harness run` runs them (the plan is unchanged)\n", ids.size());
    return CommandOutcome::ok;
  } catch (const std::invalid_argument& e) {  // refused (reset_infra): said, nothing changed
    std::fprintf(env.err, "harness: %s\n", e.what());
    return CommandOutcome::could_not_run;
  }
}

}  // namespace harness::campaign
