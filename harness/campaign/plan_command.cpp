// `harness plan`'s policy (plan_command.hpp): the refusals, then one function per part of the
// printed plan.
#include "harness/campaign/plan_command.hpp"

#include "analysis/arms.hpp"
#include "analysis/bootstrap.hpp"
#include "analysis/coverage_report.hpp"
#include "analysis/coverage_sim.hpp"
#include "harness/campaign/ab_report.hpp"
#include "harness/campaign/allocation.hpp"
#include "harness/campaign/campaign_arms.hpp"
#include "harness/campaign/campaign_db.hpp"
#include "harness/campaign/command_campaign.hpp"
#include "harness/campaign/pilot_match.hpp"
#include "harness/campaign/plan_sensitivity.hpp"
#include "harness/campaign/runner.hpp"
#include "harness/campaign/schedule.hpp"
#include "harness/campaign/wall_time.hpp"
#include "harness/cli/exit_codes.hpp"
#include "harness/json/limited_parse.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <stdexcept>

namespace harness::campaign {
namespace {

/// A refusal of `harness plan`: `why` on env.err, "stored nothing: <what>" on env.out; kError.
int refuse_plan(const CommandEnv& env, const std::string& why, const char* what) {
  std::fprintf(env.err, "harness plan: %s", why.c_str());
  std::fprintf(env.out, "stored nothing: %s\n", what);
  return harness::cli::kError;
}

std::vector<std::string> plan_regime_names(const Campaign& c) {
  std::vector<std::string> names;
  for (const auto& g : c.regimes) names.push_back(g.name);
  return names;
}

/// design ab-pairs: pairs per stratum, variants, and how `harness check` judges them.
void print_ab_design(const Campaign& c, const Schedule& s, const PlanSensitivity& sens, std::FILE* out) {
  std::fprintf(out, "pairs (baseline, candidate) per (vm, regime) stratum, for each of %zu configuration(s):\n%s",
               c.arms.size(), stratum_table(s.strata, c.vms, plan_regime_names(c), "pair").c_str());
  for (const auto& v : variant_lines(c)) std::fprintf(out, "variant %s\n", v.c_str());
  std::fprintf(out,
               "judged by `harness check`: %zu assertion(s); %zu metric tolerance(s), each interval at %g%% "
               "(family-wise alpha %g)%s\n",
               c.assertions.size(), c.tolerances.size(),
               c.tolerances.empty() ? 100.0 : 100.0 * (1 - c.regression_alpha / c.tolerances.size()),
               c.regression_alpha, c.tolerances.empty() ? "" : ":");
  for (const auto& t : c.tolerances) {
    std::fprintf(out, "  %s", t.metric.c_str());
    if (t.min_ratio) std::fprintf(out, " min_ratio %g", *t.min_ratio);
    if (t.max_ratio) std::fprintf(out, " max_ratio %g", *t.max_ratio);
    std::fprintf(out, "\n");
  }
  std::fputs(sens.text.c_str(), out);
}

/// Matched blocks: the arms and the comparisons, each spelt out as canary: treatment /
/// comparator, so that a short "<canary>:<comparator>" is seen to mean bounded-reclaim /
/// comparator; an arm in no comparison is named.
void print_arms_and_comparisons(const Campaign& c, std::FILE* out) {
  std::fprintf(out, "arms (k = %zu, one case each per matched block):\n", c.arms.size());
  for (const auto& a : c.arms) {
    std::string params = a.params.dump();
    if (a.study) params = takes_design_dose(a) ? "(the study's; dose: design.dose_mib)" : "(the study's)";
    std::fprintf(out, "  %-20s policy %s %s\n", a.name.c_str(), a.policy.c_str(), params.c_str());
  }
  std::fprintf(out, "comparisons (%s, m = %zu, each interval at 1 - %g/%zu; ratio treatment / comparator):\n",
               c.comparisons_declared ? "declared" : "the study's four", c.comparisons.size(), c.alpha,
               c.comparisons.size());
  std::set<std::string> compared;
  for (const auto& k : c.comparisons) {
    if (const auto parsed = parse_comparison(k)) {
      compared.insert({parsed->treatment, parsed->comparator});
      std::fprintf(out, "  %-8s %s / %s\n", (parsed->canary + ":").c_str(), parsed->treatment.c_str(),
                   parsed->comparator.c_str());
    } else {
      std::fprintf(out, "  %s\n", k.c_str());
    }
  }
  for (const auto& a : c.arms)
    if (!compared.count(a.name))
      std::fprintf(out, "NOTE: arm %s is in no comparison: its cases run and are reported, but no interval judges it\n",
                   a.name.c_str());
}

/// Matched blocks: blocks per stratum and the coverage known before the run, at the
/// campaign's alpha over its declared m comparisons (the study's: 0.05 over 4); simulated
/// too for matched-triplets with --simulate-coverage (analysis/coverage_sim.hpp draws the
/// study's four comparisons of triplets).
void print_blocks_and_coverage(const Campaign& c, const Schedule& s, bool simulate, std::FILE* out) {
  const std::string unit = analysis::block_word(c.design, c.arms.size());  // "triplet" for matched-triplets
  std::fprintf(out, "%ss per (vm, regime) stratum%s:\n%s", unit.c_str(),
               c.triplets_per_regime > 0 ? " (seeded balanced allocation)" : "",
               stratum_table(s.strata, c.vms, plan_regime_names(c), unit).c_str());
  std::vector<int> sizes;
  for (const auto& [vm, per] : s.strata)
    for (const auto& [regime, n] : per)
      if (n > 0) sizes.push_back(n);
  const int m = std::max(1, static_cast<int>(c.comparisons.size()));
  const double level = analysis::simultaneous_level(c.alpha, m);
  if (!sizes.empty()) std::fputs(analysis::design_coverage_text(sizes, level, m, unit).c_str(), out);
  if (simulate && !sizes.empty() && c.design == "matched-triplets") {
    analysis::CoverageSimOptions so;
    so.level = level;
    std::fputs(analysis::format_coverage_sim(analysis::simulate_coverage(sizes, so)).c_str(), out);
  }
}

/// The dose resolved from a pilot DB, the pilot DB it came from, and what differs from the pilot.
void print_pilot_dose(const Campaign& c, const Schedule& s, const std::string& engine_kind, std::FILE* out) {
  const auto p = harness::json::parse(s.json_text, "plan").at("dose_from_pilot");
  std::fprintf(out, "dose %.0f MiB chosen by the pilot rule from %s (sha256 %s, preregistered with the plan)\n",
               p.at("dose_bytes").get<double>() / (1024.0 * 1024.0), c.dose_from_pilot.c_str(),
               p.at("pilot_db_sha256").get<std::string>().c_str());
  if (c.dose_pipeline_test)
    std::fprintf(out,
                 "PIPELINE TEST: --pipeline-test-dose declares this dose a pipeline test (pilot cases by "
                 "accelerator: %s), not a dose to preregister; the plan records it and `harness analyze` says so\n",
                 p.at("pipeline_test").at("pilot_accelerators").dump().c_str());
  // Declared differences from the pilot (design.dose_mib.accept_differences; pilot_match.hpp).
  if (p.contains("accepted_differences"))
    for (const auto& d : p.at("accepted_differences"))
      std::fprintf(out, "DECLARED DIFFERENCE from the pilot: %s: pilot %s, this campaign %s\n",
                   d.at("setting").get<std::string>().c_str(), d.at("pilot").get<std::string>().c_str(),
                   d.at("campaign").get<std::string>().c_str());
  if (p.contains("pilot_rule_dose_bytes"))
    std::fprintf(out,
                 "DECLARED DIFFERENCE from the pilot: pilot_choice: the pilot's own eligibility section chooses "
                 "%.0f MiB (0 = none eligible); this campaign's chooses %.0f MiB, the dose planned\n",
                 p.at("pilot_rule_dose_bytes").get<double>() / (1024.0 * 1024.0),
                 p.at("dose_bytes").get<double>() / (1024.0 * 1024.0));
  if (engine_kind != "local-qemu" && std::find(c.dose_accept_differences.begin(), c.dose_accept_differences.end(),
                                               "guest_kernel") == c.dose_accept_differences.end())
    std::fprintf(out, "guest kernel: compared with the pilot's cases at `harness run`, from each VM's qualification\n");
}

/// The wall-time estimate (measured costs per capacity row) and the local-qemu note.
void print_wall_time(const Campaign& c, const Schedule& s, const EnginePreview& engine, std::FILE* out) {
  std::vector<HostMeasurements> measured;  // per capacity row: its guests and the costs measured there
  for (std::size_t i = 0; i < engine.capacity.hosts.size() && i < engine.costs.size(); ++i)
    measured.push_back({engine.capacity.hosts[i].capacity.guests, engine.costs[i]});
  std::fprintf(out, "%s\n",
               estimate_wall_time(c, s, engine.fresh_boot_per_case || engine.reboot_between_cases, measured).text.c_str());
  if ((c.kind == "confirmatory" || c.kind == "pilot") && engine.kind == "local-qemu")
    std::fprintf(out,
                 "note: provider.kind local-qemu: `harness run` boots this %s campaign's guests on this machine "
                 "(KVM when a trial boot works, else TCG, whose timings are not evidence); for real VMs give "
                 "`--hosts FILE` (harness/vm/HOSTS.md)\n",
                 c.kind.c_str());
}

/// Everything printed about a plan that was not refused, in order.
void print_plan(const Campaign& c, const Schedule& s, const PlanRequest& r, const EnginePreview& engine,
                const PlanSensitivity& sens, bool dirty_preview, const CommandEnv& env) {
  std::FILE* out = env.out;
  std::fprintf(out, "campaign %s (kind %s): %zu cases on %zu VM(s), design %s\n", c.name.c_str(), c.kind.c_str(),
               s.cases.size(), c.vms.size(), c.design.c_str());
  std::fprintf(out, "pinned commit: %s%s\n", c.pinned_commit.c_str(),
               dirty_preview ? " (this harness's commit, built with uncommitted changes: a preview only; storing "
                               "the plan with `harness plan FILE DB` needs a clean build)"
               : c.pinned_commit == env.build.source_commit ? " (the commit this harness was built from)"
                                                            : "");
  if (c.design == "pilot") {
    std::fprintf(out, "pilot: %zu dose(s) x %zu regime(s) x %d repeat(s) per VM\n", c.pilot_doses_mib.size(),
                 c.regimes.size(), c.repeats);
  } else if (c.design == "ab-pairs") {
    print_ab_design(c, s, sens, out);
  } else {
    print_arms_and_comparisons(c, out);
    print_blocks_and_coverage(c, s, r.simulate_coverage, out);
  }
  if (r.simulate_coverage && c.design != "matched-triplets")
    std::fprintf(out, "--simulate-coverage: only for design matched-triplets (this is %s): nothing simulated\n",
                 c.design.c_str());
  for (const auto& k : s.cases) std::fprintf(out, "  %4d %-5s %s\n", k.ordinal, k.vm.c_str(), k.case_id.c_str());
  if (!c.dose_from_pilot.empty()) print_pilot_dose(c, s, engine.kind, out);
  print_wall_time(c, s, engine, out);
  std::fprintf(out, "schedule sha256 %s\n", s.sha256_hex.c_str());
  if (r.db.empty())
    std::fprintf(out, "stored nothing: no DB given (`harness plan FILE DB` preregisters this plan)\n");
  else
    std::fprintf(out, "stored in %s\n", r.db.c_str());
}

}  // namespace

int plan_command(Campaign c, const PlanRequest& r, const CommandEnv& env) {
  c.dose_pipeline_test = r.pipeline_test_dose;
  if (same_kernel_refused(c, "plan", env)) {
    std::fprintf(env.out, "stored nothing: the variants boot the same kernel\n");
    return harness::cli::kError;
  }
  const bool dirty_preview = r.db.empty() && c.pinned_commit == "build" && env.build.source_dirty;
  resolve_build_pin(c, env.build.source_commit, env.build.source_dirty, /*preview=*/r.db.empty());
  // Capacity before anything is stored (harness/pool/capacity.hpp): refused, nothing planned.
  const auto engine = preview_engine(c, r.hosts);
  std::fprintf(env.out, "%s\n%s", engine.describe.c_str(), engine.capacity.table.c_str());
  if (!engine.capacity.ok) {
    std::fprintf(env.err, "harness: %s", engine.capacity.refusal().c_str());
    std::fprintf(env.out, "stored nothing: capacity refused\n");
    return harness::cli::kError;
  }
  const auto s = plan(c);
  // The guests' kernel against the pilot's, where plan time knows it (local-qemu's built image).
  if (const auto why = pilot_image_kernel_refusal(c, engine.kind, env.image_dir()); !why.empty())
    return refuse_plan(env, why, "the guest kernel is not the pilot's");
  // What the planned pairs can detect (plan_sensitivity.hpp): an insensitive kind: ci design is refused.
  if (!r.variance_from.empty()) env.open_db(r.variance_from);
  const auto sens = plan_sensitivity(c, s, r.variance_from);
  if (!sens.refusal.empty()) {
    std::fputs(sens.text.c_str(), env.out);
    return refuse_plan(env, sens.refusal, "the design cannot detect its tolerances");
  }
  if (!r.out.empty()) {
    std::ofstream o(r.out);
    o << s.json_text << "\n";
    if (!o) throw std::runtime_error(r.out + ": cannot write");
  }
  if (!r.db.empty()) {
    results::Db d(r.db, results::Db::Mode::Create);
    store_plan(d, c, s);
  }
  print_plan(c, s, r, engine, sens, dirty_preview, env);
  return harness::cli::kOk;
}

}  // namespace harness::campaign
