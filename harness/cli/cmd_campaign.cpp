// `harness plan | run | status | export | check | mark-infra | reset-infra`: campaigns and the runner.
// One registration function per subcommand: it declares the options, and its callback parses
// them and calls the one library function that owns the subcommand's policy (harness/cli/README.md).
#include "harness/campaign/commands/check_command.hpp"
#include "harness/campaign/commands/command_env.hpp"
#include "harness/campaign/commands/export_command.hpp"
#include "harness/campaign/commands/infra_command.hpp"
#include "harness/campaign/commands/plan_command.hpp"
#include "harness/campaign/runner/preflight.hpp"
#include "harness/campaign/commands/run_command.hpp"
#include "harness/campaign/commands/status.hpp"
#include "harness/case/control/policy.hpp"
#include "harness/cli/build_id.hpp"
#include "harness/cli/exit_codes.hpp"
#include "harness/cli/open_db.hpp"
#include "harness/cli/registry.hpp"
#include "harness/vm/paths.hpp"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <utility>

namespace hc = harness::campaign;

namespace {

/// What the campaign commands take from this executable (harness/campaign/commands/command_env.hpp):
/// stdout and stderr, this build, the command line, the local image cache, and the checked
/// opening of the DBs the user names (open_db.hpp).
hc::CommandEnv command_env() {
  hc::CommandEnv env;
  env.build = harness::cli::current_build();
  env.command_line = harness::cli::command_line();
  env.image_dir = [] { return (std::filesystem::path(harness::vm::cache_root()) / "image").string(); };
  env.open_db = [](const std::string& path) { return harness::cli::open_db(path, harness::cli::DbKind::Campaign); };
  env.check_target = [](const std::string& path) { harness::cli::check_db_writable_target(path); };
  return env;
}

/// `--db` (kept for existing scripts) or the positional DB; both given and different is
/// a usage error (exit 64).
std::string db_argument(const std::string& positional, const std::string& flag) {
  if (!positional.empty() && !flag.empty() && positional != flag)
    throw CLI::ValidationError("DB", "given twice: positional '" + positional + "' and --db '" + flag + "'");
  return positional.empty() ? flag : positional;
}

bool looks_like_yaml(const std::string& p) {
  const auto ext = std::filesystem::path(p).extension().string();
  return ext == ".yaml" || ext == ".yml";
}

/// The accelerator option of `run` and `check`.
void add_accel_option(CLI::App* sub, std::string& accel) {
  sub->add_option("--accel", accel, "accelerator for local guests: auto (trial-boot KVM, else TCG), kvm (fail if it cannot run a guest) or tcg; default $HARNESS_ACCEL, else the campaign's provider.accelerator, else auto")->check(CLI::IsMember({"auto", "kvm", "tcg"}));
}

struct PlanArgs {
  std::string file;
  bool list_policies = false;
  hc::PlanRequest request;
};

/// `harness plan`: the flags that contradict FILE are usage errors; the rest is plan_command's.
void plan_callback(const PlanArgs& a) {
  if (a.list_policies) {
    std::fputs(harness::case_::policy_catalogue().c_str(), stdout);
    return;
  }
  if (a.file.empty()) throw CLI::RequiredError("FILE");
  if (!a.request.db.empty()) harness::cli::check_db_writable_target(a.request.db);
  auto c = hc::load_campaign(a.file);
  if (!a.request.variance_from.empty() && c.design != "ab-pairs")
    throw CLI::ValidationError("--variance-from", a.file + " is design " + c.design + ", not ab-pairs: no ratio to detect");
  if (a.request.pipeline_test_dose && c.dose_from_pilot.empty())
    throw CLI::ValidationError("--pipeline-test-dose", a.file + " takes no dose from a pilot (design.dose_mib is "
                                                                "not {from_pilot: ...})");
  harness::cli::exit_code() = harness::cli::exit_code_of(hc::plan_command(std::move(c), a.request, command_env()));
}

void add_plan(CLI::App& app) {
  auto* sub = app.add_subcommand("plan", "Plan a campaign: seeded schedule + its SHA-256 (the preregistration). "
                                         "Without DB a preview: the whole design, then anything that would refuse "
                                         "it (capacity, kernel, sensitivity) as a warning, exit 0; with DB such a "
                                         "refusal stores nothing and exits 2");
  auto a = std::make_shared<PlanArgs>();
  sub->add_option("FILE", a->file, "campaign YAML (campaigns/*.yaml)");
  sub->add_flag("--list-policies", a->list_policies,
                "print the registered reclaim policies an arm may name (parameters with units, defaults and "
                "sources) and exit");
  sub->add_option("--hosts", a->request.hosts,
                  "hosts file the campaign will run on (`harness run --hosts`): its capacity is judged instead of "
                  "the campaign provider's")
      ->check(CLI::ExistingFile);
  sub->add_option("DB,--db", a->request.db,
                  "campaign DB to store the plan in (created; refused if it holds another plan). Without it the "
                  "plan is printed and nothing is stored");
  sub->add_option("--out", a->request.out, "also write the schedule JSON here");
  sub->add_flag("--cases", a->request.list_cases,
                "also print the schedule: one row per case in run order (ordinal, VM, case id); without it plan "
                "prints how many cases there are, and the summary (capacity, wall time, schedule SHA-256) comes last");
  sub->add_flag("--simulate-coverage", a->request.simulate_coverage,
                "matched blocks (matched-triplets, matched-blocks): also measure the coverage of the primary "
                "intervals at this design by simulation, for the campaign's k arms and its m declared comparisons "
                "(one row per comparison; 2,000 synthetic datasets x B = 10,000, seed 1; "
                "analysis/simulate/coverage_sim.hpp)");
  sub->add_flag("--pipeline-test-dose", a->request.pipeline_test_dose,
                "design.dose_mib {from_pilot}: accept a pilot DB whose cases ran under TCG, declaring the dose a "
                "pipeline test, not a dose to preregister (stored with the plan, shown by `harness analyze`); "
                "without it such a pilot DB is refused");
  sub->add_option("--variance-from", a->request.variance_from,
                  "A/B campaigns: a stored A/A (or A/B) campaign DB whose pairs give the noise; plan then prints, per "
                  "metric with a tolerance, the smallest ratio the planned pairs detect and the pairs (design.repeats) "
                  "its tolerance needs, and refuses a kind: ci design that cannot detect its tolerance (unless "
                  "regression.accept_insensitive: true; docs/CI.md). A DB of another design, or whose pairs give no "
                  "such metric any noise, is refused (exit 2), naming the DB")
      ->check(CLI::ExistingFile);
  sub->callback([a] { plan_callback(*a); });
}

struct RunArgs {
  std::string file, db, db_flag;
  bool plain = false;
  hc::RunOptions options;
};

void add_run(CLI::App& app) {
  auto* sub = app.add_subcommand("run", "Run (or resume) a campaign into its DB; only infra_failed cases are retried");
  auto a = std::make_shared<RunArgs>();
  sub->add_option("FILE", a->file, "campaign YAML (optional when the DB already holds the plan: `harness run DB`)");
  sub->add_option("DB", a->db, "campaign DB (SQLite, WAL; created and planned when missing)");
  sub->add_option("--db", a->db_flag, "same as the positional DB (older spelling)");
  sub->add_option("--hosts", a->options.hosts_file, "hosts file of running agents (harness/vm/HOSTS.md); default: the campaign's provider");
  sub->add_flag("--plain", a->plain, "plain progress lines even on a terminal");
  add_accel_option(sub, a->options.accelerator);
  sub->add_option("--host-wait-s", a->options.host_wait.total_s, "how long to wait for an agent that does not answer (exponential backoff from 1 s, at most 60 s apart) before leaving its cases pending, s; no attempt is spent while waiting")->capture_default_str()->check(CLI::Range(0, 86400));
  sub->callback([a] {
    std::string campaign_file = a->file, db_path = db_argument(a->db, a->db_flag);
    if (db_path.empty() && !campaign_file.empty() && !looks_like_yaml(campaign_file))
      std::swap(campaign_file, db_path);  // `harness run DB`: the DB holds the plan
    if (db_path.empty())
      throw CLI::RequiredError("DB: `harness run FILE DB` (or `harness run DB` when DB holds the plan)");
    if (!campaign_file.empty()) harness::cli::check_db_writable_target(db_path);
    auto o = a->options;
    if (a->plain) o.progress_tty = 0;
    harness::cli::exit_code() = harness::cli::exit_code_of(hc::run_command(campaign_file, db_path, o, command_env()));
  });
}

void add_status(CLI::App& app) {
  auto* sub = app.add_subcommand("status", "What is done, failed and pending in a campaign DB");
  auto db = std::make_shared<std::string>();
  sub->add_option("DB", *db, "campaign DB")->required();
  sub->callback([db] {
    const auto d = harness::cli::open_db(*db, harness::cli::DbKind::Campaign);
    std::fputs(hc::status_report(*d).c_str(), stdout);
  });
}

struct InfraArgs {
  std::string db, id, reason;
  bool override_outcome = false;
};

void add_mark_infra(CLI::App& app) {
  auto* sub = app.add_subcommand("mark-infra",
                                 "Reclassify a case as infra_failed so the next run reruns it (audited in "
                                 "attempts: kind mark-infra); a completed or lost case only with --override-outcome");
  auto a = std::make_shared<InfraArgs>();
  sub->add_option("DB", a->db, "campaign DB")->required();
  sub->add_option("CASE", a->id, "case id (as in `harness status`)")->required();
  sub->add_option("--reason", a->reason, "why this was an infrastructure failure (kept in the audit trail)")->required();
  sub->add_flag("--override-outcome", a->override_outcome,
                "allow reclassifying a completed or lost case (its outcome): the original outcome and its p99s are "
                "kept in the audit row, the report names the case and shows Table 4 with it reinstated");
  sub->callback([a] {
    const auto d = harness::cli::open_db_rw(a->db, harness::cli::DbKind::Campaign);
    const auto outcome = hc::mark_infra_command(*d, a->id, a->reason, a->override_outcome, command_env());
    harness::cli::exit_code() = harness::cli::exit_code_of(outcome);
  });
}

void add_reset_infra(CLI::App& app) {
  auto* sub = app.add_subcommand("reset-infra",
                                 "Make infra_failed cases whose retries are exhausted runnable again (audited in "
                                 "attempts: kind reset-infra; the plan and its SHA-256 are unchanged)");
  auto a = std::make_shared<InfraArgs>();
  sub->add_option("DB", a->db, "campaign DB")->required()->check(CLI::ExistingFile);
  sub->add_option("--case", a->id, "only this case id (default: every infra_failed case)");
  sub->add_option("--reason", a->reason, "why the failures were the infrastructure's (kept in the audit trail)")->required();
  sub->callback([a] {
    results::Db d(a->db, results::Db::Mode::ReadWrite);
    harness::cli::exit_code() = harness::cli::exit_code_of(hc::reset_infra_command(d, a->id, a->reason, command_env()));
  });
}

void add_export(CLI::App& app) {
  auto* sub = app.add_subcommand("export", "Export a campaign DB as tidy tables");
  auto db = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("csv");
  auto out = std::make_shared<std::string>();
  sub->add_option("DB", *db, "campaign DB")->required();
  sub->add_option("--format", *format, "csv")->check(CLI::IsMember({"csv"}));
  sub->add_option("--out", *out, "output folder (default: DB name without extension + '-csv')");
  // `format` is captured though unread: CLI11 writes the parsed value into it, so it must live
  // as long as the command (without it, --format wrote into freed memory).
  sub->callback([db, format, out] {
    const auto d = harness::cli::open_db(*db, harness::cli::DbKind::Results);
    harness::cli::exit_code() = harness::cli::exit_code_of(hc::export_command(*d, *db, *out, command_env()));
  });
}

/// The options of `harness check`, bound to `r`.
void add_check_options(CLI::App* sub, hc::CheckRequest& r) {
  sub->add_option("FILE", r.file, "campaign YAML with `assertions:` (or design ab-pairs)")->required();
  sub->add_option("DB,--db", r.db,
                  "campaign DB; refused when it already holds attempts unless --reuse (default: a new "
                  "./<campaign>-<UTC time>.db for every invocation)");
  sub->add_flag("--reuse", r.reuse,
                "accept a DB that holds an earlier run: resume it (only unfinished cases run) and judge all its "
                "cases, old ones included");
  sub->add_option("--hosts", r.hosts, "hosts file of running agents; default: the campaign's provider");
  sub->add_option("--junit", r.junit, "write JUnit XML here (one testcase per assertion and, A/B, per metric)");
  auto* kcidb = sub->add_option("--kcidb", r.kcidb.path,
                  "write the run as KCIDB I/O JSON here (schema 5.3, KernelCI's common results database: a checkout and "
                  "a build per guest kernel, a test per assertion and kernel and, A/B, per metric with its ratio and "
                  "interval; docs/CI.md \"Submitting to KernelCI\")");
  sub->add_option("--kcidb-origin", r.kcidb.origin,
                  "with --kcidb: your CI system's KCIDB origin, the prefix of every id ([a-z0-9_]+, agreed with KCIDB's "
                  "maintainers; default reclaim_harness)")
      ->needs(kcidb);
  sub->add_option("--kcidb-git-url", r.kcidb.git_url,
                  "with --kcidb: https:// URL of the repository of the kernel under test (A/B: the candidate's)")
      ->needs(kcidb);
  sub->add_option("--kcidb-git-commit", r.kcidb.git_commit,
                  "with --kcidb: full commit hash (40 hex) of the kernel under test (A/B: the candidate's); KernelCI's "
                  "dashboard shows a checkout only with one")
      ->needs(kcidb);
  sub->add_option("--kcidb-artifacts-url", r.kcidb.artifacts_url,
                  "with --kcidb: https:// URL of the folder where the job publishes the --junit and --markdown files "
                  "(each test lists them as output files)")
      ->needs(kcidb);
  sub->add_option("--markdown", r.markdown,
                  "write the Markdown summary here (A/B default: <DB dir>/<DB stem>-check.md next to the DB; "
                  "other campaigns: only when given)");
  sub->add_option("--baseline-db", r.baseline_db,
                  "A/B campaigns: take the baseline cases from this earlier run's DB and run only the candidate "
                  "cases (refused, exit 2, when it is missing, holds no baseline case, its comparison settings "
                  "differ, or its cases ran in another environment than the candidate's in what the campaign does "
                  "not change: accelerator, kernel release, cmdline, knobs read back, harness commit, host engine; "
                  "the refusal lists each; see --allow-env-drift)");
  sub->add_flag("--allow-env-drift", r.allow_drift,
                "with --baseline-db: compare even when the baseline's cases ran in another environment (accelerator, "
                "kernel release, cmdline, knobs read back, harness commit, host engine) in what the campaign does not "
                "ask to change; both environments are recorded in the JUnit and Markdown");
  sub->add_flag("--plain", r.plain, "plain progress lines even on a terminal");
  add_accel_option(sub, r.accelerator);
  sub->add_flag("--until-decided", r.until_decided,
                "A/B campaigns: run the pairs in looks of design.repeats each, judging after every look, until a "
                "metric regresses or every metric with a tolerance is decided (interval wholly within it), at most "
                "--max-pairs pairs; intervals at 1 - alpha/(m x looks), valid however early it stops (docs/CI.md "
                "\"Deciding with more pairs\"); undecided at the cap exits 5");
  sub->add_option("--max-pairs", r.max_pairs,
                  "with --until-decided (required): the cap on pairs, over all strata; the plan holds them all")
      ->check(CLI::Range(1, 100000));
  sub->add_option("--judge", r.judge,
                  "judge this stored campaign DB again with FILE's assertions and tolerances as they are now, "
                  "running no case (the DB's cases must be FILE's campaign and its stored plan FILE's design: design "
                  "kind, variants and comparison settings, else refused, exit 2, naming both values; with "
                  "--baseline-db the baseline's cases come from there); the same output and exit codes");
}

void add_check(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "check",
      "Run a CI campaign on a fresh DB and evaluate its assertions and, for an A/B campaign (design ab-pairs), "
      "the candidate/baseline metric comparisons (JUnit XML with kernel, commit, accelerator, times and measured "
      "values; Markdown summary; exit 1 on a failed assertion or a regression, 2 when it could not run, 5 when a "
      "metric is inconclusive)");
  auto r = std::make_shared<hc::CheckRequest>();
  add_check_options(sub, *r);
  sub->callback([r] {
    if (r->until_decided != (r->max_pairs > 0))
      throw CLI::ValidationError(r->until_decided ? "--until-decided" : "--max-pairs",
                                 "--until-decided and --max-pairs N go together");
    if (r->until_decided && !r->baseline_db.empty())
      throw CLI::ValidationError("--until-decided", "adds pairs of both variants; not with --baseline-db");
    if (!r->judge.empty() && !r->db.empty())
      throw CLI::ValidationError("--judge", "judges the DB it names; give no DB argument beside it");
    if (auto why = hc::check_kcidb_options(r->kcidb); !why) throw CLI::ValidationError("--kcidb", why.error().message);
    harness::cli::exit_code() = harness::cli::exit_code_of(hc::check_command(*r, command_env()));
  });
}

}  // namespace

static const bool kCampaignRegistered = harness::cli::register_commands("campaign", [](CLI::App& app) {
  add_plan(app);
  add_run(app);
  add_status(app);
  add_mark_infra(app);
  add_reset_infra(app);
  add_export(app);
  add_check(app);
});
