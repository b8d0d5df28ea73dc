// `harness check`'s policy (check_command.hpp).
#include "harness/campaign/commands/check_command.hpp"

#include "analysis/compare/regression.hpp"
#include "analysis/stats/sequential.hpp"
#include "harness/campaign/model/ab_settings.hpp"
#include "harness/campaign/check/check_sequential.hpp"
#include "harness/campaign/commands/command_campaign.hpp"
#include "harness/text/join.hpp"
#include "results/store/attempt_views.hpp"
#include "results/store/case_queries.hpp"

#include <chrono>
#include <cstdint>
#include <ctime>
#include <exception>
#include <filesystem>
#include <optional>
#include <utility>

namespace harness::campaign {
namespace {

/// Attempts and imported cases an existing DB already holds (0, 0 when it does not exist).
std::pair<std::int64_t, std::int64_t> earlier_run(const std::string& db_path, const CommandEnv& env) {
  if (!std::filesystem::exists(db_path) || std::filesystem::file_size(db_path) == 0) return {0, 0};
  env.check_target(db_path);
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  return {results::attempt_count(db), results::case_count(db)};
}

/// Whether `base` may give this check its baseline cases (baseline_db_refusal; the harness
/// commit is compared only when `compare_commit`). A refusal or an unreadable `base` is said on
/// env.err and gives true.
bool refused_baseline(const Campaign& c, const std::string& base, bool compare_commit, const CommandEnv& env) {
  try {
    const auto bdb = env.open_db(base);
    std::optional<std::string> ours;
    if (compare_commit) ours = env.build.source_commit + (env.build.source_dirty ? "+dirty" : "");
    const auto r = baseline_db_refusal(*bdb, base, c, ours);
    if (!r.refused()) return false;
    std::fputs(r.text.c_str(), env.err);
  } catch (const std::exception& e) {  // unreadable: said as the refusal it is
    std::fprintf(env.err, "harness check: --baseline-db: %s\n", e.what());
  }
  return true;
}

/// Whether `db` may be judged with `c` (judged_db_refusal); a refusal is said on env.err.
bool refused_judged(const Campaign& c, const std::string& db, const CommandEnv& env) {
  const auto d = env.open_db(db);
  const auto r = judged_db_refusal(*d, db, c);
  if (!r.refused()) return false;
  std::fputs(r.text.c_str(), env.err);
  return true;
}

/// Judges in.db under `c`, prints what it found; the verdict and whether a sequential check
/// stops here (look_decides).
std::pair<CheckVerdict, bool> judge_and_print(const Campaign& c, const JudgeRequest& in, const CommandEnv& env) {
  const auto d = env.open_db(in.db);
  std::unique_ptr<results::Db> base;
  if (c.design == "ab-pairs" && !in.baseline_db.empty()) base = env.open_db(in.baseline_db);
  auto prov = results::collect_provenance(*d, env.build, env.command_line);
  if (base && results::is_synthetic_db(*base)) prov.synthetic = true;  // its artifacts say so first
  const auto j = judge(c, in, *d, base.get(), prov);
  const auto text = render_judgement(j);
  std::fputs(text.out.c_str(), env.out);
  std::fputs(text.err.c_str(), env.err);
  return {j.verdict, look_decides(j)};
}

/// --until-decided: the looks of `c` (sequential_campaign), said on env.out with their level.
analysis::LookSchedule announce_looks(const Campaign& c, const CheckRequest& r, const CommandEnv& env) {
  const auto looks = sequential_looks(c);
  const int per_repeat = pairs_per_repeat(c);
  std::string at;
  for (int n : looks.repeats) at += (at.empty() ? "" : ", ") + std::to_string(n * per_repeat);
  std::fprintf(env.out,
               "until decided: at most %d pair(s), judged after %d look(s) at %s pairs; each interval at %g%% "
               "(alpha %g over %zu metric(s) x %d look(s))\n",
               c.repeats * per_repeat, looks.looks(), at.c_str(),
               100 * analysis::comparison_level(c.regression_alpha, static_cast<int>(c.tolerances.size()),
                                                looks.looks()),
               c.regression_alpha, c.tolerances.size(), looks.looks());
  if (const int cap = c.repeats * per_repeat; r.until_decided && cap != r.max_pairs)
    std::fprintf(env.out,
                 "  (--max-pairs %d rounded down to %d: whole repeats of %d pair(s), one per vm, regime and "
                 "configuration)\n",
                 r.max_pairs, cap, per_repeat);
  return looks;
}

/// The refusals before anything runs that need only the campaign and the options: the
/// same-kernel rule (not for --judge) and --baseline-db without an A/B design. Throws when a
/// campaign that is not A/B has no assertions.
bool refused_up_front(const Campaign& c, const CheckRequest& r, const CommandEnv& env) {
  const bool ab = c.design == "ab-pairs";
  if (r.judge.empty() && same_kernel_refused(c, "check", env)) return true;
  if (!r.baseline_db.empty() && !ab) {  // said first: the flag is the user's mistake, not the file
    std::fprintf(env.err, "harness check: --baseline-db needs an A/B campaign (design.kind ab-pairs); %s is %s\n",
                 r.file.c_str(), c.design.c_str());
    return true;
  }
  if (c.assertions.empty() && !ab) throw std::runtime_error(r.file + ": field assertions: none given; nothing to check");
  return false;
}

/// Runs the cases into in.db and judges them: once, or (sequential) look k runs the pairs of
/// repeats 1..r_k, the rest skipped, then judges, until a look decides or the cap is reached.
CommandOutcome run_and_judge(const Campaign& c, const CheckRequest& r, const JudgeRequest& in,
                  const std::optional<analysis::LookSchedule>& looks, const CommandEnv& env) {
  RunOptions o;
  o.db_path = in.db;
  o.skip_cases = in.skip_cases;
  o.hosts_file = r.hosts;
  o.accelerator = r.accelerator;
  if (r.plain) o.progress_tty = 0;
  if (!looks) {
    if (!run_and_print(c, o, env)) return CommandOutcome::could_not_run;
    return check_outcome(judge_and_print(c, in, env).first);
  }
  for (int k = 1; k <= looks->looks(); ++k) {
    std::fprintf(env.out, "look %d of %d: up to %d pair(s)\n", k, looks->looks(),
                 looks->repeats[static_cast<std::size_t>(k - 1)] * pairs_per_repeat(c));
    o.skip_cases = cases_after_look(c, k);
    if (!run_and_print(c, o, env)) return CommandOutcome::could_not_run;
    JudgeRequest look_in = in;
    look_in.skip_cases = o.skip_cases;  // not run on purpose: all_cases_completed judges the look's cases only
    const auto [verdict, decides] = judge_and_print(c, look_in, env);
    if (decides) return check_outcome(verdict);
    if (k < looks->looks()) std::fprintf(env.out, "look %d: not decided yet; adding pairs\n", k);
  }
  // "exit 5": the code harness/cli/exit_codes.hpp gives the outcome returned below.
  std::fprintf(env.out, "until decided: the cap of %d pair(s) is reached and a metric is still undecided (exit 5)\n",
               c.repeats * pairs_per_repeat(c));
  return CommandOutcome::inconclusive;  // look_decides: no finding, not all decided
}

/// The first line on stdout when a DB this check reads (`dbs`, "" skipped) was written by the
/// synthetic generator (results::synthetic_banner; issue 59), naming them.
void say_if_synthetic(const std::vector<std::string>& dbs, const CommandEnv& env) {
  std::vector<std::string> synthetic;
  for (const auto& path : dbs) {
    if (path.empty()) continue;
    try {
      if (results::is_synthetic_db(*env.open_db(path))) synthetic.push_back(path);
    } catch (const std::exception&) {  // missing or not a DB: the refusal that follows says so
    }
  }
  if (!synthetic.empty())
    std::fprintf(env.out, "%s: %s\n", results::synthetic_banner().c_str(), text::join(synthetic, ", ").c_str());
}

}  // namespace

CommandOutcome check_outcome(CheckVerdict v) {
  switch (v) {
    case CheckVerdict::ok: return CommandOutcome::ok;
    case CheckVerdict::finding: return CommandOutcome::finding;
    case CheckVerdict::inconclusive: return CommandOutcome::inconclusive;
    case CheckVerdict::cannot_judge: break;
  }
  return CommandOutcome::could_not_run;
}

std::string fresh_check_db(const std::string& campaign) {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  const std::string base = campaign + "-" + stamp;
  std::string p = base + ".db";
  for (int i = 2; std::filesystem::exists(p); ++i) p = base + "-" + std::to_string(i) + ".db";
  return p;
}

Expected<std::string> check_run_db(const std::string& campaign, const std::string& named, bool reuse,
                                   const CommandEnv& env) {
  const std::string path = named.empty() ? fresh_check_db(campaign) : named;
  const auto [attempts, cases] = earlier_run(path, env);
  if (attempts + cases == 0) {
    std::fprintf(env.out, "check database: %s (new run)\n", path.c_str());
    return path;
  }
  if (!reuse)
    return problem(path + " already holds an earlier run (" + std::to_string(attempts) + " attempt(s), " +
                   std::to_string(cases) + " case(s)); its cases would be judged again without running anything "
                   "new. Give a new DB path (or none: a new DB per invocation), or --reuse to resume that run and "
                   "judge its cases");
  std::fprintf(env.out, "reusing %s: %lld attempt(s) and %lld case(s) from earlier runs are judged too (--reuse)\n",
               path.c_str(), static_cast<long long>(attempts), static_cast<long long>(cases));
  return path;
}

CommandOutcome check_command(const CheckRequest& r, const CommandEnv& env) {
  const auto c = r.until_decided ? sequential_campaign(pinned_campaign(r.file, env), r.max_pairs)
                                 : pinned_campaign(r.file, env);
  const bool judging = !r.judge.empty();
  if (refused_up_front(c, r, env)) return CommandOutcome::could_not_run;
  say_if_synthetic({r.judge, r.baseline_db}, env);
  JudgeRequest in{"", r.baseline_db, r.junit, r.markdown, r.allow_drift, {}, {}, r.kcidb};
  std::optional<analysis::LookSchedule> looks;
  if (c.sequential) {
    looks = announce_looks(c, r, env);
    in.rule = {analysis::VerdictRule::decide, looks->looks()};
  }
  if (!r.baseline_db.empty()) {
    // Known before anything runs: the harness build. The rest of the environment is
    // compared once the candidate's cases have run (--judge: the cases ran, compared then).
    if (refused_baseline(c, r.baseline_db, !judging && !r.allow_drift, env)) return CommandOutcome::could_not_run;
    // Only the candidate cases run; the baseline cases stay pending in this DB (the plan
    // and its SHA-256 are the full campaign's, so both DBs hold the same preregistration).
    in.skip_cases = baseline_case_ids(c);
    std::fprintf(env.out,
                 "baseline cases from %s (comparison settings sha256 %s); %zu baseline case(s) of this plan not run\n",
                 r.baseline_db.c_str(), comparison_settings_sha256(c).c_str(), in.skip_cases.size());
  }
  if (judging) {
    if (refused_judged(c, r.judge, env)) return CommandOutcome::could_not_run;
    std::fprintf(env.out, "judging %s with %s's assertions and tolerances as they are now (--judge: no case runs)\n",
                 r.judge.c_str(), r.file.c_str());
    in.db = r.judge;
    if (looks) {  // a sequential check's DB: the looks it never reached were not run on purpose
      const int k = look_reached(c, *env.open_db(r.judge));
      in.skip_cases = cases_after_look(c, k);
      std::fprintf(env.out, "the DB reached look %d of %d (%d pair(s))%s\n", k, looks->looks(),
                   looks->repeats[static_cast<std::size_t>(k - 1)] * pairs_per_repeat(c),
                   k < looks->looks() ? "; the later looks' pairs were not run and are not judged" : "");
    }
    return check_outcome(judge_and_print(c, in, env).first);
  }
  const auto run_db = check_run_db(c.name, r.db, r.reuse, env);
  if (!run_db) {
    std::fprintf(env.err, "harness check: %s\n", run_db.error().message.c_str());
    return CommandOutcome::could_not_run;
  }
  in.db = *run_db;
  return run_and_judge(c, r, in, looks, env);
}

}  // namespace harness::campaign
