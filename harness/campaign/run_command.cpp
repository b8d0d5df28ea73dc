// `harness run`'s policy (run_command.hpp).
#include "harness/campaign/run_command.hpp"

#include "harness/campaign/command_campaign.hpp"
#include "harness/campaign/preflight.hpp"
#include "harness/cli/exit_codes.hpp"
#include "harness/pool/pool.hpp"
#include "harness/text/shell_quote.hpp"

namespace harness::campaign {
namespace {

void print_run_summary(const RunSummary& s, std::FILE* out) {
  std::fprintf(out, "run: %d planned, %d completed, %d lost, %d left infra_failed, %d pending; %d attempt(s) in this run",
               s.planned, s.completed, s.lost, s.infra_failed, s.pending, s.attempts_this_run);
  if (s.taken_over) std::fprintf(out, ", %d taken over from an interrupted runner", s.taken_over);
  std::fprintf(out, "\n");
  for (const auto& u : s.unreachable)
    std::fprintf(out, "unreachable: %s; its cases stay pending (run the same command again once it answers)\n",
                 u.c_str());
  for (const auto& u : s.unusable)
    std::fprintf(out, "unusable: %s; its cases stay pending (run the same command again once the mark is cleared)\n",
                 u.c_str());
}

}  // namespace

std::optional<RunSummary> run_and_print(const Campaign& c, RunOptions o, const CommandEnv& env) {
  std::fflush(env.out);  // the runner's progress goes to stderr: what was printed so far comes first
  std::string table;
  o.preflight_out = &table;
  try {
    auto s = run_campaign(c, o);
    if (!table.empty()) std::fprintf(env.out, "qualification before scheduling:\n%s", table.c_str());
    print_run_summary(s, env.out);
    return s;
  } catch (const PreflightRefused& e) {
    std::fprintf(env.err, "harness: %s", e.what());
  } catch (const harness::pool::CapacityError& e) {
    std::fprintf(env.err, "harness: %s", e.what());
  }
  return std::nullopt;  // refused before any case was submitted: said above
}

int run_command(const std::string& file, const std::string& db_path, RunOptions o, const CommandEnv& env) {
  const auto c = run_campaign_of(file, db_path, env);
  if (same_kernel_refused(c, "run", env)) return harness::cli::kError;
  o.db_path = db_path;
  const auto s = run_and_print(c, o, env);
  if (!s) return harness::cli::kError;
  // Cases left infra_failed or pending: the run could not finish (infrastructure).
  if (s->completed + s->lost != s->planned) {
    std::fprintf(env.err, "harness run: %d case(s) not finished (infra_failed or pending); see `harness status %s`\n",
                 s->planned - s->completed - s->lost, harness::text::shell_quote(db_path).c_str());
    return harness::cli::kError;
  }
  return harness::cli::kOk;
}

}  // namespace harness::campaign
