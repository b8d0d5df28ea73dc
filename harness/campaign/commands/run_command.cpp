// `harness run`'s policy (run_command.hpp).
#include "harness/campaign/commands/run_command.hpp"

#include "harness/campaign/commands/command_campaign.hpp"
#include "harness/text/shell_quote.hpp"

namespace harness::campaign {

CommandOutcome run_command(const std::string& file, const std::string& db_path, RunOptions o, const CommandEnv& env) {
  const auto c = run_campaign_of(file, db_path, env);
  if (same_kernel_refused(c, "run", env)) return CommandOutcome::could_not_run;
  o.db_path = db_path;
  const auto s = run_and_print(c, o, env);
  if (!s) return CommandOutcome::could_not_run;
  // Cases left infra_failed or pending: the run could not finish (infrastructure).
  if (s->completed + s->lost != s->planned) {
    std::fprintf(env.err, "harness run: %d case(s) not finished (infra_failed or pending); see `harness status %s`\n",
                 s->planned - s->completed - s->lost, harness::text::shell_quote(db_path).c_str());
    return CommandOutcome::could_not_run;
  }
  return CommandOutcome::ok;
}

}  // namespace harness::campaign
