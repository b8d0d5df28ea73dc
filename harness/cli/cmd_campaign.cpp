// `harness plan | run | status | export | check | mark-infra | reset-infra`: campaigns and the runner.
#include "analysis/arms.hpp"
#include "analysis/bootstrap.hpp"
#include "analysis/coverage_report.hpp"
#include "analysis/coverage_sim.hpp"
#include "analysis/regression.hpp"
#include "harness/json/limited_parse.hpp"
#include "harness/campaign/check_judge.hpp"
#include "harness/campaign/ab_report.hpp"
#include "harness/campaign/ab_same_kernel.hpp"
#include "harness/campaign/ab_settings.hpp"
#include "harness/campaign/assertions.hpp"
#include "harness/campaign/campaign.hpp"
#include "harness/campaign/campaign_arms.hpp"
#include "harness/case/policy.hpp"
#include "harness/campaign/campaign_db.hpp"
#include "harness/campaign/export.hpp"
#include "harness/campaign/pilot_match.hpp"
#include "harness/campaign/plan_sensitivity.hpp"
#include "harness/campaign/check_sequential.hpp"
#include "harness/campaign/preflight.hpp"
#include "harness/campaign/runner.hpp"
#include "harness/campaign/schedule.hpp"
#include "harness/campaign/status.hpp"
#include "harness/campaign/wall_time.hpp"
#include "harness/pool/pool.hpp"
#include "harness/vm/paths.hpp"
#include "harness/cli/build_id.hpp"
#include "harness/cli/exit_codes.hpp"
#include "harness/cli/open_db.hpp"
#include "harness/cli/registry.hpp"
#include "harness/text/shell_quote.hpp"
#include "results/provenance.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <unistd.h>

#include "harness/build_info.hpp"

namespace hc = harness::campaign;

namespace {

/// A campaign file as the CLI plans and runs it: `pinned_commit: build` becomes this
/// harness build's commit (refused from a dirty build).
hc::Campaign load_pinned(const std::string& file) {
  auto c = hc::load_campaign(file);
  hc::resolve_build_pin(c, harness::build::kSourceCommit, harness::build::kSourceDirty);
  return c;
}

/// The same-kernel rule (ab_same_kernel.hpp) before anything is stored or booted: prints the
/// refusal on stderr, sets exit code 2 and returns true when `c` is refused.
bool refused_same_kernel(const hc::Campaign& c, const char* command) {
  const std::string why =
      hc::same_kernel_refusal(c, (std::filesystem::path(harness::vm::cache_root()) / "image").string());
  if (why.empty()) return false;
  std::fprintf(stderr, "harness %s: %s", command, why.c_str());
  harness::cli::exit_code() = harness::cli::kError;
  return true;
}

/// Whether the plan stored in `db_path` declared its from_pilot dose a pipeline test
/// (`harness plan --pipeline-test-dose`: schedule JSON dose_from_pilot.pipeline_test). False
/// when the DB does not exist or holds no plan. A run plans again, so it must plan the same.
bool stored_pipeline_test(const std::string& db_path) {
  if (!std::filesystem::exists(db_path) || std::filesystem::file_size(db_path) == 0) return false;
  const auto dbp = harness::cli::open_db(db_path, harness::cli::DbKind::Campaign);
  results::Stmt q(*dbp, "SELECT json_extract(value, '$.dose_from_pilot.pipeline_test.declared') FROM campaign_meta "
                        "WHERE key = 'schedule_json'");
  return q.step() && !q.is_null(0) && q.int64(0) == 1;
}

/// The --max-pairs of a sequential check whose plan `db_path` stores (check_sequential.hpp
/// stored_max_pairs); nullopt when the DB does not exist or holds another plan. A run plans
/// again, so it must plan the same.
std::optional<int> stored_sequential(const std::string& db_path) {
  if (!std::filesystem::exists(db_path) || std::filesystem::file_size(db_path) == 0) return std::nullopt;
  const auto dbp = harness::cli::open_db(db_path, harness::cli::DbKind::Campaign);
  return hc::stored_max_pairs(*dbp);
}

/// The campaign of a run: FILE when given, else the YAML stored in the DB at plan time.
hc::Campaign campaign_for(const std::string& file, const std::string& db_path) {
  if (!file.empty()) {
    auto c = load_pinned(file);
    c.dose_pipeline_test = stored_pipeline_test(db_path);
    if (const auto n = stored_sequential(db_path)) return hc::sequential_campaign(c, *n);
    return c;
  }
  if (!std::filesystem::exists(db_path))
    throw std::runtime_error(db_path + ": no such campaign DB (give the campaign FILE to plan it: `harness run FILE " +
                             db_path + "`)");
  auto c = hc::stored_campaign(*harness::cli::open_db(db_path, harness::cli::DbKind::Campaign), db_path);
  hc::resolve_build_pin(c, harness::build::kSourceCommit, harness::build::kSourceDirty);
  c.dose_pipeline_test = stored_pipeline_test(db_path);
  if (const auto n = stored_sequential(db_path)) return hc::sequential_campaign(c, *n);
  return c;
}

void print_summary(const hc::RunSummary& s) {
  std::printf("run: %d planned, %d completed, %d lost, %d left infra_failed, %d pending; %d attempt(s) in this run",
              s.planned, s.completed, s.lost, s.infra_failed, s.pending, s.attempts_this_run);
  if (s.taken_over) std::printf(", %d taken over from an interrupted runner", s.taken_over);
  std::printf("\n");
  for (const auto& u : s.unreachable)
    std::printf("unreachable: %s; its cases stay pending (run the same command again once it answers)\n", u.c_str());
  for (const auto& u : s.unusable)
    std::printf("unusable: %s; its cases stay pending (run the same command again once the mark is cleared)\n",
                u.c_str());
}

/// Runs the campaign and prints the fleet qualification table. A refused preflight prints
/// why, sets exit code 2 and returns nullopt (no case was submitted).
std::optional<hc::RunSummary> run_printing(const hc::Campaign& c, hc::RunOptions o) {
  std::fflush(stdout);  // the runner's progress goes to stderr: what was printed so far comes first
  std::string table;
  o.preflight_out = &table;
  try {
    auto s = hc::run_campaign(c, o);
    if (!table.empty()) std::printf("qualification before scheduling:\n%s", table.c_str());
    print_summary(s);
    return s;
  } catch (const hc::PreflightRefused& e) {
    std::fprintf(stderr, "harness: %s", e.what());
    harness::cli::exit_code() = 2;
    return std::nullopt;
  } catch (const harness::pool::CapacityError& e) {
    std::fprintf(stderr, "harness: %s", e.what());
    harness::cli::exit_code() = 2;
    return std::nullopt;
  }
}

/// Who runs `harness mark-infra`: $USER, else "uid N".
std::string operator_name() {
  if (const char* u = std::getenv("USER"); u && *u) return u;
  return "uid " + std::to_string(::getuid());
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

/// A new DB path for one `harness check` run: ./<campaign>-<UTC YYYYmmddTHHMMSSZ>.db,
/// with -2, -3, ... appended when that file exists (ours: CI never reuses a DB unasked).
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

/// Attempts and imported cases an existing DB already holds (0, 0 when it does not exist).
std::pair<std::int64_t, std::int64_t> earlier_run(const std::string& db_path) {
  if (!std::filesystem::exists(db_path) || std::filesystem::file_size(db_path) == 0) return {0, 0};
  harness::cli::check_db_writable_target(db_path);
  results::Db db(db_path, results::Db::Mode::ReadOnly);
  results::Stmt q(db, "SELECT (SELECT count(*) FROM attempts), (SELECT count(*) FROM cases)");
  q.step();
  return {q.int64(0), q.int64(1)};
}


/// `harness check --baseline-db BASE`: whether BASE may give this check its baseline cases
/// (check_judge.hpp baseline_db_refusal; the harness commit is compared only when cases will
/// run without --allow-env-drift). A refusal or an unreadable BASE is printed on stderr, sets
/// exit code 2 and returns true.
bool refused_baseline(const hc::Campaign& c, const std::string& base, bool compare_commit) {
  try {
    const auto bdb = harness::cli::open_db(base, harness::cli::DbKind::Campaign);
    std::optional<std::string> ours;
    if (compare_commit)
      ours = std::string(harness::build::kSourceCommit) + (harness::build::kSourceDirty ? "+dirty" : "");
    const auto r = hc::baseline_db_refusal(*bdb, base, c, ours);
    if (!r.refused()) return false;
    std::fputs(r.text.c_str(), stderr);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "harness check: --baseline-db: %s\n", e.what());
  }
  harness::cli::exit_code() = harness::cli::kError;
  return true;
}

/// `harness check --judge DB`: whether DB may be judged with `c` (check_judge.hpp
/// judged_db_refusal). A refusal is printed on stderr, sets exit code 2 and returns true.
bool refused_judged(const hc::Campaign& c, const std::string& db) {
  const auto d = harness::cli::open_db(db, harness::cli::DbKind::Campaign);
  const auto r = hc::judged_db_refusal(*d, db, c);
  if (!r.refused()) return false;
  std::fputs(r.text.c_str(), stderr);
  harness::cli::exit_code() = harness::cli::kError;
  return true;
}

/// The DB a `harness check` run writes: `named`, else a fresh ./<campaign>-<time>.db. CI never
/// passes on stale data: a DB that holds an earlier run is refused (printed, exit code 2,
/// nullopt) unless `reuse`.
std::optional<std::string> check_run_db(const hc::Campaign& c, const std::string& named, bool reuse) {
  const std::string path = named.empty() ? fresh_check_db(c.name) : named;
  const auto [attempts, cases] = earlier_run(path);
  if (attempts + cases == 0) {
    std::printf("check database: %s (new run)\n", path.c_str());
    return path;
  }
  if (!reuse) {
    std::fprintf(stderr,
                 "harness check: %s already holds an earlier run (%lld attempt(s), %lld case(s)); its cases "
                 "would be judged again without running anything new. Give a new DB path (or none: a new DB "
                 "per invocation), or --reuse to resume that run and judge its cases\n",
                 path.c_str(), static_cast<long long>(attempts), static_cast<long long>(cases));
    harness::cli::exit_code() = harness::cli::kError;
    return std::nullopt;
  }
  std::printf("reusing %s: %lld attempt(s) and %lld case(s) from earlier runs are judged too (--reuse)\n",
              path.c_str(), static_cast<long long>(attempts), static_cast<long long>(cases));
  return path;
}

/// Judges in.db under `c` (check_judge.hpp judge), prints what it found, sets the exit code
/// from the verdict (ok 0, finding 1, cannot judge 2, inconclusive 5) and returns the verdict
/// and whether a sequential check stops here (check_sequential.hpp look_decides).
std::pair<hc::CheckVerdict, bool> judge_and_print(const hc::Campaign& c, const hc::JudgeRequest& in) {
  const auto d = harness::cli::open_db(in.db, harness::cli::DbKind::Campaign);
  std::unique_ptr<results::Db> base;
  if (c.design == "ab-pairs" && !in.baseline_db.empty())
    base = harness::cli::open_db(in.baseline_db, harness::cli::DbKind::Campaign);
  const auto prov = results::collect_provenance(*d, harness::cli::current_build(), harness::cli::command_line());
  const auto j = hc::judge(c, in, *d, base.get(), prov);
  const auto text = hc::render_judgement(j);
  std::fputs(text.out.c_str(), stdout);
  std::fputs(text.err.c_str(), stderr);
  harness::cli::exit_code() = j.verdict == hc::CheckVerdict::ok             ? harness::cli::kOk
                              : j.verdict == hc::CheckVerdict::finding      ? harness::cli::kFinding
                              : j.verdict == hc::CheckVerdict::inconclusive ? harness::cli::kInconclusive
                                                                            : harness::cli::kError;
  return {j.verdict, hc::look_decides(j)};
}
}  // namespace

static const bool kCampaignRegistered = harness::cli::register_commands("campaign", [](CLI::App& app) {
  {
    auto* sub = app.add_subcommand("plan", "Plan a campaign: seeded schedule + its SHA-256 (the preregistration)");
    auto file = std::make_shared<std::string>();
    auto db = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    auto plan_hosts = std::make_shared<std::string>();
    sub->add_option("FILE", *file, "campaign YAML (campaigns/*.yaml)");
    auto list_policies = std::make_shared<bool>(false);
    sub->add_flag("--list-policies", *list_policies,
                  "print the registered reclaim policies an arm may name (parameters with units, defaults and "
                  "sources) and exit");
    sub->add_option("--hosts", *plan_hosts,
                    "hosts file the campaign will run on (`harness run --hosts`): its capacity is judged instead of "
                    "the campaign provider's")
        ->check(CLI::ExistingFile);
    sub->add_option("DB,--db", *db,
                    "campaign DB to store the plan in (created; refused if it holds another plan). Without it the "
                    "plan is printed and nothing is stored");
    sub->add_option("--out", *out, "also write the schedule JSON here");
    auto simulate = std::make_shared<bool>(false);
    sub->add_flag("--simulate-coverage", *simulate,
                  "matched-triplets: also measure the coverage of the primary intervals at this design by simulation "
                  "(2,000 synthetic datasets x B = 10,000, seeded; analysis/coverage_sim.hpp)");
    auto pipeline_test = std::make_shared<bool>(false);
    sub->add_flag("--pipeline-test-dose", *pipeline_test,
                  "design.dose_mib {from_pilot}: accept a pilot DB whose cases ran under TCG, declaring the dose a "
                  "pipeline test, not a dose to preregister (stored with the plan, shown by `harness analyze`); "
                  "without it such a pilot DB is refused");
    auto variance_from = std::make_shared<std::string>();
    sub->add_option("--variance-from", *variance_from,
                    "A/B campaigns: a stored A/A (or A/B) campaign DB whose pairs give the noise; plan then prints, per "
                    "metric with a tolerance, the smallest ratio the planned pairs detect, and refuses a kind: ci "
                    "design that cannot detect its tolerance (unless regression.accept_insensitive: true; docs/CI.md)")
        ->check(CLI::ExistingFile);
    sub->callback([=] {
      if (*list_policies) {
        std::fputs(harness::case_::policy_catalogue().c_str(), stdout);
        return;
      }
      if (file->empty()) throw CLI::RequiredError("FILE");
      if (!db->empty()) harness::cli::check_db_writable_target(*db);
      auto c = hc::load_campaign(*file);
      if (!variance_from->empty() && c.design != "ab-pairs")
        throw CLI::ValidationError("--variance-from", *file + " is design " + c.design + ", not ab-pairs: no ratio to detect");
      if (*pipeline_test && c.dose_from_pilot.empty())
        throw CLI::ValidationError("--pipeline-test-dose", *file + " takes no dose from a pilot (design.dose_mib is "
                                                                   "not {from_pilot: ...})");
      c.dose_pipeline_test = *pipeline_test;
      if (refused_same_kernel(c, "plan")) {
        std::printf("stored nothing: the variants boot the same kernel\n");
        return;
      }
      const bool dirty_preview = db->empty() && c.pinned_commit == "build" && harness::build::kSourceDirty;
      hc::resolve_build_pin(c, harness::build::kSourceCommit, harness::build::kSourceDirty, /*preview=*/db->empty());
      // Capacity before anything is stored (harness/pool/capacity.hpp): refused, nothing planned.
      const auto engine = hc::preview_engine(c, *plan_hosts);
      std::printf("%s\n%s", engine.describe.c_str(), engine.capacity.table.c_str());
      if (!engine.capacity.ok) {
        std::fprintf(stderr, "harness: %s", engine.capacity.refusal().c_str());
        std::printf("stored nothing: capacity refused\n");
        harness::cli::exit_code() = harness::cli::kError;
        return;
      }
      const auto s = hc::plan(c);
      // The guests' kernel against the pilot's, where plan time knows it (local-qemu's built image).
      if (const auto why = hc::pilot_image_kernel_refusal(
              c, engine.kind, (std::filesystem::path(harness::vm::cache_root()) / "image").string());
          !why.empty()) {
        std::fprintf(stderr, "harness plan: %s", why.c_str());
        std::printf("stored nothing: the guest kernel is not the pilot's\n");
        harness::cli::exit_code() = harness::cli::kError;
        return;
      }
      // What the planned pairs can detect (plan_sensitivity.hpp): an insensitive kind: ci design is refused.
      if (!variance_from->empty()) harness::cli::open_db(*variance_from, harness::cli::DbKind::Campaign);
      const auto sens = hc::plan_sensitivity(c, s, *variance_from);
      if (!sens.refusal.empty()) {
        std::fputs(sens.text.c_str(), stdout);
        std::fprintf(stderr, "harness plan: %s", sens.refusal.c_str());
        std::printf("stored nothing: the design cannot detect its tolerances\n");
        harness::cli::exit_code() = harness::cli::kError;
        return;
      }
      if (!out->empty()) {
        std::ofstream o(*out);
        o << s.json_text << "\n";
        if (!o) throw std::runtime_error(*out + ": cannot write");
      }
      if (!db->empty()) {
        results::Db d(*db, results::Db::Mode::Create);
        hc::store_plan(d, c, s);
      }
      std::printf("campaign %s (kind %s): %zu cases on %zu VM(s), design %s\n", c.name.c_str(), c.kind.c_str(),
                  s.cases.size(), c.vms.size(), c.design.c_str());
      std::printf("pinned commit: %s%s\n", c.pinned_commit.c_str(),
                  dirty_preview ? " (this harness's commit, built with uncommitted changes: a preview only; storing "
                                  "the plan with `harness plan FILE DB` needs a clean build)"
                  : c.pinned_commit == harness::build::kSourceCommit ? " (the commit this harness was built from)"
                                                                       : "");
      std::vector<std::string> regimes;
      for (const auto& g : c.regimes) regimes.push_back(g.name);
      if (c.design == "pilot")
        std::printf("pilot: %zu dose(s) x %zu regime(s) x %d repeat(s) per VM\n", c.pilot_doses_mib.size(),
                    c.regimes.size(), c.repeats);
      else if (c.design == "ab-pairs") {
        std::printf("pairs (baseline, candidate) per (vm, regime) stratum, for each of %zu configuration(s):\n%s",
                    c.arms.size(), hc::stratum_table(s.strata, c.vms, regimes, "pair").c_str());
        for (const auto& v : hc::variant_lines(c)) std::printf("variant %s\n", v.c_str());
        std::printf("judged by `harness check`: %zu assertion(s); %zu metric tolerance(s), each interval at %g%% "
                    "(family-wise alpha %g)%s\n",
                    c.assertions.size(), c.tolerances.size(),
                    c.tolerances.empty() ? 100.0 : 100.0 * (1 - c.regression_alpha / c.tolerances.size()),
                    c.regression_alpha, c.tolerances.empty() ? "" : ":");
        for (const auto& t : c.tolerances) {
          std::printf("  %s", t.metric.c_str());
          if (t.min_ratio) std::printf(" min_ratio %g", *t.min_ratio);
          if (t.max_ratio) std::printf(" max_ratio %g", *t.max_ratio);
          std::printf("\n");
        }
        std::fputs(sens.text.c_str(), stdout);
      } else {
        std::printf("arms (k = %zu, one case each per matched block):\n", c.arms.size());
        for (const auto& a : c.arms) {
          std::string params = a.params.dump();
          if (a.study) params = hc::takes_design_dose(a) ? "(the study's; dose: design.dose_mib)" : "(the study's)";
          std::printf("  %-20s policy %s %s\n", a.name.c_str(), a.policy.c_str(), params.c_str());
        }
        // Each comparison spelt out as canary: treatment / comparator (ratio treatment / comparator),
        // so that a short "<canary>:<comparator>" is seen to mean bounded-reclaim / comparator.
        std::printf("comparisons (%s, m = %zu, each interval at 1 - %g/%zu; ratio treatment / comparator):\n",
                    c.comparisons_declared ? "declared" : "the study's four", c.comparisons.size(), c.alpha,
                    c.comparisons.size());
        std::set<std::string> compared;
        for (const auto& k : c.comparisons) {
          if (const auto parsed = hc::parse_comparison(k)) {
            compared.insert({parsed->treatment, parsed->comparator});
            std::printf("  %-8s %s / %s\n", (parsed->canary + ":").c_str(), parsed->treatment.c_str(),
                        parsed->comparator.c_str());
          } else {
            std::printf("  %s\n", k.c_str());
          }
        }
        for (const auto& a : c.arms)
          if (!compared.count(a.name))
            std::printf("NOTE: arm %s is in no comparison: its cases run and are reported, but no interval judges it\n",
                        a.name.c_str());
        const std::string unit = analysis::block_word(c.design, c.arms.size());  // "triplet" for matched-triplets
        std::printf("%ss per (vm, regime) stratum%s:\n%s", unit.c_str(),
                    c.triplets_per_regime > 0 ? " (seeded balanced allocation)" : "",
                    hc::stratum_table(s.strata, c.vms, regimes, unit).c_str());
        // Coverage known before the run: the campaign's alpha over its declared m comparisons
        // (the study's: 0.05 over 4).
        std::vector<int> sizes;
        for (const auto& [vm, per] : s.strata)
          for (const auto& [regime, n] : per)
            if (n > 0) sizes.push_back(n);
        const int m = std::max(1, static_cast<int>(c.comparisons.size()));
        const double level = analysis::simultaneous_level(c.alpha, m);
        if (!sizes.empty()) std::fputs(analysis::design_coverage_text(sizes, level, m, unit).c_str(), stdout);
        // The simulation draws the study's four comparisons of triplets (analysis/coverage_sim.hpp);
        // other designs get the analytic figures only (said below).
        if (*simulate && !sizes.empty() && c.design == "matched-triplets") {
          analysis::CoverageSimOptions so;
          so.level = level;
          std::fputs(analysis::format_coverage_sim(analysis::simulate_coverage(sizes, so)).c_str(), stdout);
        }
      }
      if (*simulate && c.design != "matched-triplets")
        std::printf("--simulate-coverage: only for design matched-triplets (this is %s): nothing simulated\n",
                    c.design.c_str());
      for (const auto& k : s.cases)
        std::printf("  %4d %-5s %s\n", k.ordinal, k.vm.c_str(), k.case_id.c_str());
      if (!c.dose_from_pilot.empty()) {  // the resolved dose and the pilot DB it came from
        const auto p = harness::json::parse(s.json_text, "plan").at("dose_from_pilot");
        std::printf("dose %.0f MiB chosen by the pilot rule from %s (sha256 %s, preregistered with the plan)\n",
                    p.at("dose_bytes").get<double>() / (1024.0 * 1024.0), c.dose_from_pilot.c_str(),
                    p.at("pilot_db_sha256").get<std::string>().c_str());
        if (c.dose_pipeline_test)
          std::printf("PIPELINE TEST: --pipeline-test-dose declares this dose a pipeline test (pilot cases by "
                      "accelerator: %s), not a dose to preregister; the plan records it and `harness analyze` says "
                      "so\n",
                      p.at("pipeline_test").at("pilot_accelerators").dump().c_str());
        // Declared differences from the pilot (design.dose_mib.accept_differences; pilot_match.hpp).
        if (p.contains("accepted_differences"))
          for (const auto& d : p.at("accepted_differences"))
            std::printf("DECLARED DIFFERENCE from the pilot: %s: pilot %s, this campaign %s\n",
                        d.at("setting").get<std::string>().c_str(), d.at("pilot").get<std::string>().c_str(),
                        d.at("campaign").get<std::string>().c_str());
        if (p.contains("pilot_rule_dose_bytes"))
          std::printf("DECLARED DIFFERENCE from the pilot: pilot_choice: the pilot's own eligibility section chooses "
                      "%.0f MiB (0 = none eligible); this campaign's chooses %.0f MiB, the dose planned\n",
                      p.at("pilot_rule_dose_bytes").get<double>() / (1024.0 * 1024.0),
                      p.at("dose_bytes").get<double>() / (1024.0 * 1024.0));
        if (engine.kind != "local-qemu" && std::find(c.dose_accept_differences.begin(), c.dose_accept_differences.end(),
                                                    "guest_kernel") == c.dose_accept_differences.end())
          std::printf("guest kernel: compared with the pilot's cases at `harness run`, from each VM's qualification\n");
      }
      std::vector<hc::HostMeasurements> measured;  // per capacity row: its guests and the costs measured there
      for (std::size_t i = 0; i < engine.capacity.hosts.size() && i < engine.costs.size(); ++i)
        measured.push_back({engine.capacity.hosts[i].capacity.guests, engine.costs[i]});
      std::printf("%s\n",
                  hc::estimate_wall_time(c, s, engine.fresh_boot_per_case || engine.reboot_between_cases, measured).text.c_str());
      if ((c.kind == "confirmatory" || c.kind == "pilot") && engine.kind == "local-qemu")
        std::printf("note: provider.kind local-qemu: `harness run` boots this %s campaign's guests on this machine "
                    "(KVM when a trial boot works, else TCG, whose timings are not evidence); for real VMs give "
                    "`--hosts FILE` (harness/vm/HOSTS.md)\n",
                    c.kind.c_str());
      std::printf("schedule sha256 %s\n", s.sha256_hex.c_str());
      if (db->empty())
        std::printf("stored nothing: no DB given (`harness plan FILE DB` preregisters this plan)\n");
      else
        std::printf("stored in %s\n", db->c_str());
    });
  }
  {
    auto* sub = app.add_subcommand("run", "Run (or resume) a campaign into its DB; only infra_failed cases are retried");
    auto file = std::make_shared<std::string>();
    auto db = std::make_shared<std::string>();
    auto hosts = std::make_shared<std::string>();
    auto plain = std::make_shared<bool>(false);
    auto db_flag = std::make_shared<std::string>();
    sub->add_option("FILE", *file, "campaign YAML (optional when the DB already holds the plan: `harness run DB`)");
    sub->add_option("DB", *db, "campaign DB (SQLite, WAL; created and planned when missing)");
    sub->add_option("--db", *db_flag, "same as the positional DB (older spelling)");
    sub->add_option("--hosts", *hosts, "hosts file of running agents (harness/vm/HOSTS.md); default: the campaign's provider");
    sub->add_flag("--plain", *plain, "plain progress lines even on a terminal");
    auto accel = std::make_shared<std::string>();
    sub->add_option("--accel", *accel, "accelerator for local guests: auto (trial-boot KVM, else TCG), kvm (fail if it cannot run a guest) or tcg; default $HARNESS_ACCEL, else the campaign's provider.accelerator, else auto")->check(CLI::IsMember({"auto", "kvm", "tcg"}));
    auto host_wait = std::make_shared<int>(hc::HostWait{}.total_s);
    sub->add_option("--host-wait-s", *host_wait, "how long to wait for an agent that does not answer (exponential backoff from 1 s, at most 60 s apart) before leaving its cases pending, s; no attempt is spent while waiting")->capture_default_str()->check(CLI::Range(0, 86400));
    sub->callback([=] {
      std::string campaign_file = *file, db_path = db_argument(*db, *db_flag);
      if (db_path.empty() && !campaign_file.empty() && !looks_like_yaml(campaign_file))
        std::swap(campaign_file, db_path);  // `harness run DB`: the DB holds the plan
      if (db_path.empty())
        throw CLI::RequiredError("DB: `harness run FILE DB` (or `harness run DB` when DB holds the plan)");
      if (!campaign_file.empty()) harness::cli::check_db_writable_target(db_path);
      const auto c = campaign_for(campaign_file, db_path);
      if (refused_same_kernel(c, "run")) return;
      hc::RunOptions o;
      o.host_wait.total_s = *host_wait;
      o.db_path = db_path;
      o.hosts_file = *hosts;
      o.accelerator = *accel;
      if (*plain) o.progress_tty = 0;
      const auto s = run_printing(c, o);
      if (!s) return;
      // Cases left infra_failed or pending: the run could not finish (infrastructure).
      if (s->completed + s->lost != s->planned) {
        std::fprintf(stderr, "harness run: %d case(s) not finished (infra_failed or pending); see `harness status %s`\n",
                     s->planned - s->completed - s->lost, harness::text::shell_quote(db_path).c_str());
        harness::cli::exit_code() = harness::cli::kError;
      }
    });
  }
  {
    auto* sub = app.add_subcommand("status", "What is done, failed and pending in a campaign DB");
    auto db = std::make_shared<std::string>();
    sub->add_option("DB", *db, "campaign DB")->required();
    sub->callback([=] {
      const auto d = harness::cli::open_db(*db, harness::cli::DbKind::Campaign);
      std::fputs(hc::status_report(*d).c_str(), stdout);
    });
  }
  {
    auto* sub = app.add_subcommand("mark-infra",
                                   "Reclassify a case as infra_failed so the next run reruns it (audited in "
                                   "attempts: kind mark-infra); a completed or lost case only with --override-outcome");
    auto db = std::make_shared<std::string>();
    auto id = std::make_shared<std::string>();
    auto reason = std::make_shared<std::string>();
    auto override_outcome = std::make_shared<bool>(false);
    sub->add_option("DB", *db, "campaign DB")->required();
    sub->add_option("CASE", *id, "case id (as in `harness status`)")->required();
    sub->add_option("--reason", *reason, "why this was an infrastructure failure (kept in the audit trail)")->required();
    sub->add_flag("--override-outcome", *override_outcome,
                  "allow reclassifying a completed or lost case (its outcome): the original outcome and its p99s are "
                  "kept in the audit row, the report names the case and shows Table 4 with it reinstated");
    sub->callback([=] {
      const auto dp = harness::cli::open_db_rw(*db, harness::cli::DbKind::Campaign);
      auto& d = *dp;
      try {
        const auto prev = hc::mark_infra(d, *id, *reason, operator_name(), *override_outcome);
        std::printf("%s: %s -> infra_failed (marked by %s%s); the next `harness run` reruns it\n", id->c_str(),
                    prev.c_str(), operator_name().c_str(),
                    prev == "completed" || prev == "lost" ? ", outcome overridden: the original is kept in the audit" : "");
      } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "harness: %s\n", e.what());
        harness::cli::exit_code() = 2;
      }
    });
  }
  {
    auto* sub = app.add_subcommand("reset-infra",
                                   "Make infra_failed cases whose retries are exhausted runnable again (audited in "
                                   "attempts: kind reset-infra; the plan and its SHA-256 are unchanged)");
    auto db = std::make_shared<std::string>();
    auto id = std::make_shared<std::string>();
    auto reason = std::make_shared<std::string>();
    sub->add_option("DB", *db, "campaign DB")->required()->check(CLI::ExistingFile);
    sub->add_option("--case", *id, "only this case id (default: every infra_failed case)");
    sub->add_option("--reason", *reason, "why the failures were the infrastructure's (kept in the audit trail)")->required();
    sub->callback([=] {
      results::Db d(*db, results::Db::Mode::ReadWrite);
      try {
        const auto ids = hc::reset_infra(d, *id, *reason, operator_name());
        for (const auto& x : ids) std::printf("%s: retry budget reset (by %s)\n", x.c_str(), operator_name().c_str());
        std::printf("%zu case(s) reset; the next `harness run` runs them (the plan is unchanged)\n", ids.size());
      } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "harness: %s\n", e.what());
        harness::cli::exit_code() = 2;
      }
    });
  }
  {
    auto* sub = app.add_subcommand("export", "Export a campaign DB as tidy tables");
    auto db = std::make_shared<std::string>();
    auto format = std::make_shared<std::string>("csv");
    auto out = std::make_shared<std::string>();
    sub->add_option("DB", *db, "campaign DB")->required();
    sub->add_option("--format", *format, "csv")->check(CLI::IsMember({"csv"}));
    sub->add_option("--out", *out, "output folder (default: DB name without extension + '-csv')");
    sub->callback([=] {
      std::string dir = *out;
      if (dir.empty()) dir = (std::filesystem::path(*db).parent_path() / std::filesystem::path(*db).stem()).string() + "-csv";
      const auto d = harness::cli::open_db(*db, harness::cli::DbKind::Results);
      const auto prov = results::collect_provenance(*d, harness::cli::current_build(), harness::cli::command_line());
      for (const auto& f : hc::export_csv(*d, dir, &prov)) std::printf("%s\n", f.c_str());
    });
  }
  {
    auto* sub = app.add_subcommand(
        "check",
        "Run a CI campaign on a fresh DB and evaluate its assertions and, for an A/B campaign (design ab-pairs), "
        "the candidate/baseline metric comparisons (JUnit XML with kernel, commit, accelerator, times and measured "
        "values; Markdown summary; exit 1 on a failed assertion or a regression, 2 when it could not run, 5 when a "
        "metric is inconclusive)");
    auto file = std::make_shared<std::string>();
    auto db = std::make_shared<std::string>();
    auto hosts = std::make_shared<std::string>();
    auto junit = std::make_shared<std::string>();
    auto markdown = std::make_shared<std::string>();
    auto baseline_db = std::make_shared<std::string>();
    auto plain = std::make_shared<bool>(false);
    auto reuse = std::make_shared<bool>(false);
    sub->add_option("FILE", *file, "campaign YAML with `assertions:` (or design ab-pairs)")->required();
    sub->add_option("DB,--db", *db,
                    "campaign DB; refused when it already holds attempts unless --reuse (default: a new "
                    "./<campaign>-<UTC time>.db for every invocation)");
    sub->add_flag("--reuse", *reuse,
                  "accept a DB that holds an earlier run: resume it (only unfinished cases run) and judge all its "
                  "cases, old ones included");
    sub->add_option("--hosts", *hosts, "hosts file of running agents; default: the campaign's provider");
    sub->add_option("--junit", *junit, "write JUnit XML here (one testcase per assertion and, A/B, per metric)");
    sub->add_option("--markdown", *markdown,
                    "write the Markdown summary here (A/B default: <DB dir>/<DB stem>-check.md next to the DB; "
                    "other campaigns: only when given)");
    sub->add_option("--baseline-db", *baseline_db,
                    "A/B campaigns: take the baseline cases from this earlier run's DB and run only the candidate "
                    "cases (refused, exit 2, when it is missing, holds no baseline case, its comparison settings "
                    "differ, or its cases ran in another environment than the candidate's in what the campaign does "
                    "not change: accelerator, kernel release, cmdline, knobs read back, harness commit, host engine; "
                    "the refusal lists each; see --allow-env-drift)");
    auto allow_drift = std::make_shared<bool>(false);
    sub->add_flag("--allow-env-drift", *allow_drift,
                  "with --baseline-db: compare even when the baseline's cases ran in another environment (accelerator, "
                  "kernel release, cmdline, knobs read back, harness commit, host engine) in what the campaign does not "
                  "ask to change; both environments are recorded in the JUnit and Markdown");
    sub->add_flag("--plain", *plain, "plain progress lines even on a terminal");
    auto accel = std::make_shared<std::string>();
    sub->add_option("--accel", *accel, "accelerator for local guests: auto (trial-boot KVM, else TCG), kvm (fail if it cannot run a guest) or tcg; default $HARNESS_ACCEL, else the campaign's provider.accelerator, else auto")->check(CLI::IsMember({"auto", "kvm", "tcg"}));
    auto until_decided = std::make_shared<bool>(false);
    sub->add_flag("--until-decided", *until_decided,
                  "A/B campaigns: run the pairs in looks of design.repeats each, judging after every look, until a "
                  "metric regresses or every metric with a tolerance is decided (interval wholly within it), at most "
                  "--max-pairs pairs; intervals at 1 - alpha/(m x looks), valid however early it stops (docs/CI.md "
                  "\"Deciding with more pairs\"); undecided at the cap exits 5");
    auto max_pairs = std::make_shared<int>(0);
    sub->add_option("--max-pairs", *max_pairs,
                    "with --until-decided (required): the cap on pairs, over all strata; the plan holds them all")
        ->check(CLI::Range(1, 100000));
    auto judge = std::make_shared<std::string>();
    sub->add_option("--judge", *judge,
                    "judge this stored campaign DB again with FILE's assertions and tolerances as they are now, "
                    "running no case (the DB's cases must be FILE's campaign and its stored plan FILE's design: design "
                    "kind, variants and comparison settings, else refused, exit 2, naming both values; with "
                    "--baseline-db the baseline's cases come from there); the same output and exit codes");
    sub->callback([=] {
      if (*until_decided != (*max_pairs > 0))
        throw CLI::ValidationError(*until_decided ? "--until-decided" : "--max-pairs",
                                   "--until-decided and --max-pairs N go together");
      if (*until_decided && !baseline_db->empty())
        throw CLI::ValidationError("--until-decided", "adds pairs of both variants; not with --baseline-db");
      const auto c = *until_decided ? hc::sequential_campaign(load_pinned(*file), *max_pairs) : load_pinned(*file);
      const bool ab = c.design == "ab-pairs";
      const bool judging = !judge->empty();
      if (judging && !db->empty())
        throw CLI::ValidationError("--judge", "judges the DB it names; give no DB argument beside it");
      if (!judging && refused_same_kernel(c, "check")) return;
      if (!baseline_db->empty() && !ab) {  // said first: the flag is the user's mistake, not the file
        std::fprintf(stderr, "harness check: --baseline-db needs an A/B campaign (design.kind ab-pairs); %s is %s\n",
                     file->c_str(), c.design.c_str());
        harness::cli::exit_code() = harness::cli::kError;
        return;
      }
      if (c.assertions.empty() && !ab)
        throw std::runtime_error(*file + ": field assertions: none given; nothing to check");
      hc::JudgeRequest in{"", *baseline_db, *junit, *markdown, *allow_drift, {}, {}};
      std::optional<analysis::LookSchedule> looks;
      if (c.sequential) {
        looks = hc::sequential_looks(c);
        in.rule = {analysis::VerdictRule::decide, looks->looks()};
        std::string at;
        for (int r : looks->repeats) at += (at.empty() ? "" : ", ") + std::to_string(r * hc::pairs_per_repeat(c));
        std::printf("until decided: at most %d pair(s), judged after %d look(s) at %s pairs; each interval at %g%% "
                    "(alpha %g over %zu metric(s) x %d look(s))\n",
                    c.repeats * hc::pairs_per_repeat(c), looks->looks(), at.c_str(),
                    100 * analysis::comparison_level(c.regression_alpha, static_cast<int>(c.tolerances.size()),
                                                     looks->looks()),
                    c.regression_alpha, c.tolerances.size(), looks->looks());
        if (const int cap = c.repeats * hc::pairs_per_repeat(c); *until_decided && cap != *max_pairs)
          std::printf("  (--max-pairs %d rounded down to %d: whole repeats of %d pair(s), one per vm, regime and "
                      "configuration)\n", *max_pairs, cap, hc::pairs_per_repeat(c));
      }
      if (!baseline_db->empty()) {
        // Known before anything runs: the harness build. The rest of the environment is
        // compared once the candidate's cases have run (--judge: the cases ran, compared then).
        if (refused_baseline(c, *baseline_db, !judging && !*allow_drift)) return;
        // Only the candidate cases run; the baseline cases stay pending in this DB (the plan
        // and its SHA-256 are the full campaign's, so both DBs hold the same preregistration).
        in.skip_cases = hc::baseline_case_ids(c);
        std::printf("baseline cases from %s (comparison settings sha256 %s); %zu baseline case(s) of this plan "
                    "not run\n",
                    baseline_db->c_str(), hc::comparison_settings_sha256(c).c_str(), in.skip_cases.size());
      }
      if (judging) {
        if (refused_judged(c, *judge)) return;
        std::printf("judging %s with %s's assertions and tolerances as they are now (--judge: no case runs)\n",
                    judge->c_str(), file->c_str());
        in.db = *judge;
        if (looks) {  // a sequential check's DB: the looks it never reached were not run on purpose
          results::Db jd(*judge, results::Db::Mode::ReadOnly);
          const int k = hc::look_reached(c, jd);
          in.skip_cases = hc::cases_after_look(c, k);
          std::printf("the DB reached look %d of %d (%d pair(s)); its later pairs are not judged\n", k, looks->looks(),
                      looks->repeats[static_cast<std::size_t>(k - 1)] * hc::pairs_per_repeat(c));
        }
        judge_and_print(c, in);
        return;
      }
      const auto run_db = check_run_db(c, *db, *reuse);
      if (!run_db) return;
      hc::RunOptions o;
      o.db_path = *run_db;
      o.skip_cases = in.skip_cases;
      o.hosts_file = *hosts;
      o.accelerator = *accel;
      if (*plain) o.progress_tty = 0;
      in.db = o.db_path;
      if (!looks) {
        if (!run_printing(c, o)) return;
        judge_and_print(c, in);
        return;
      }
      // Sequential: look k runs the pairs of repeats 1..r_k (the rest skipped), then judges.
      for (int k = 1; k <= looks->looks(); ++k) {
        std::printf("look %d of %d: up to %d pair(s)\n", k, looks->looks(),
                    looks->repeats[static_cast<std::size_t>(k - 1)] * hc::pairs_per_repeat(c));
        o.skip_cases = hc::cases_after_look(c, k);
        in.skip_cases = o.skip_cases;  // not run on purpose: all_cases_completed judges the look's cases only
        if (!run_printing(c, o)) return;
        const auto [verdict, decides] = judge_and_print(c, in);
        if (decides) return;
        if (k < looks->looks()) std::printf("look %d: not decided yet; adding pairs\n", k);
      }
      harness::cli::exit_code() = harness::cli::kInconclusive;  // look_decides: no finding, not all decided
      std::printf("until decided: the cap of %d pair(s) is reached and a metric is still undecided (exit %d)\n",
                  c.repeats * hc::pairs_per_repeat(c), harness::cli::kInconclusive);
    });
  }
});
