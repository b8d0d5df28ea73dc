// `harness plan`'s policy (plan_command.hpp): the refusals, then one function per part of the
// printed plan.
#include "harness/campaign/commands/plan_command.hpp"

#include "analysis/data/arms.hpp"
#include "analysis/stats/bootstrap.hpp"
#include "analysis/simulate/coverage_report.hpp"
#include "analysis/simulate/coverage_sim.hpp"
#include "harness/campaign/plan/coverage_family.hpp"
#include "harness/campaign/check/ab_report.hpp"
#include "harness/campaign/check/ab_same_kernel.hpp"
#include "harness/campaign/plan/allocation.hpp"
#include "harness/campaign/model/campaign_arms.hpp"
#include "harness/campaign/model/dose.hpp"
#include "harness/campaign/model/pilot_settings.hpp"
#include "harness/campaign/store/campaign_db.hpp"
#include "harness/campaign/commands/command_campaign.hpp"
#include "harness/campaign/plan/pilot_match.hpp"
#include "harness/campaign/check/plan_sensitivity.hpp"
#include "harness/campaign/runner/runner.hpp"
#include "harness/campaign/plan/schedule.hpp"
#include "harness/campaign/plan/wall_time.hpp"
#include "harness/json/limited_parse.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <stdexcept>

namespace harness::campaign {
namespace {

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
/// too with --simulate-coverage, for the campaign's k arms and m comparisons
/// (plan/coverage_family.hpp, analysis/simulate/coverage_sim.hpp).
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
  if (!sizes.empty()) std::fputs(analysis::design_coverage_text(sizes, level, m, unit, simulate).c_str(), out);
  if (simulate && !sizes.empty()) {
    analysis::CoverageSimOptions so;
    so.level = level;
    so.family = coverage_family(c);
    std::fputs(analysis::format_coverage_sim(analysis::simulate_coverage(sizes, so)).c_str(), out);
  }
}

/// The dose resolved from a pilot DB, the pilot DB it came from, and what differs from the pilot;
/// when the engine knows its guests' kernel only at run (`kernel_known_before_boot` false), when
/// it is compared with the pilot's.
void print_pilot_dose(const Campaign& c, const Schedule& s, bool kernel_known_before_boot, std::FILE* out) {
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
  if (!kernel_known_before_boot && std::find(c.dose_accept_differences.begin(), c.dose_accept_differences.end(),
                                            kGuestKernelSetting) == c.dose_accept_differences.end())
    std::fprintf(out, "guest kernel: compared with the pilot's cases at `harness run`, from each VM's qualification\n");
}

/// The wall-time estimate (measured costs per capacity row) and, for an engine whose guests run
/// on this machine, the note that a pilot or confirmatory campaign's timings want real VMs.
void print_wall_time(const Campaign& c, const Schedule& s, const EnginePreview& engine, std::FILE* out) {
  std::vector<HostMeasurements> measured;  // per capacity row: its guests and the costs measured there
  for (std::size_t i = 0; i < engine.capacity.hosts.size() && i < engine.costs.size(); ++i)
    measured.push_back({engine.capacity.hosts[i].capacity.guests, engine.costs[i]});
  std::fprintf(out, "%s\n",
               estimate_wall_time(c, s, engine.fresh_boot_per_case || engine.reboot_between_cases, measured).text.c_str());
  if ((c.kind == "confirmatory" || c.kind == "pilot") && engine.capabilities.guests_on_this_machine)
    std::fprintf(out,
                 "note: provider.kind %s: `harness run` boots this %s campaign's guests on this machine "
                 "(KVM when a trial boot works, else TCG, whose timings are not evidence); for real VMs give "
                 "`--hosts FILE` (harness/vm/HOSTS.md)\n",
                 engine.kind.c_str(), c.kind.c_str());
}

/// The case rows (only with --cases), else one line saying how to get them.
void print_cases(const Schedule& s, const PlanRequest& r, std::FILE* out) {
  if (!r.list_cases) {
    std::fprintf(out, "schedule: %zu case(s) in run order (`--cases` lists them; `--out FILE` writes the schedule JSON)\n",
                 s.cases.size());
    return;
  }
  std::fprintf(out, "schedule (run order per VM; ordinal, VM, case id):\n");
  for (const auto& k : s.cases) std::fprintf(out, "  %4d %-5s %s\n", k.ordinal, k.vm.c_str(), k.case_id.c_str());
}

/// The whole design, printed whatever is refused afterwards: header, design, the rows on
/// request, then the summary last (engine and capacity, wall time, schedule SHA-256).
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
  if (r.simulate_coverage && (c.design == "pilot" || c.design == "ab-pairs"))
    std::fprintf(out,
                 "--simulate-coverage: only for matched blocks (design matched-triplets or matched-blocks; this is "
                 "%s): nothing simulated\n",
                 c.design.c_str());
  print_cases(s, r, out);
  if (!c.dose_from_pilot.empty()) print_pilot_dose(c, s, engine.capabilities.kernel_known_before_boot, out);
  std::fprintf(out, "%s\n%s", engine.describe.c_str(), engine.capacity.table.c_str());
  print_wall_time(c, s, engine, out);
  std::fprintf(out, "schedule sha256 %s\n", s.sha256_hex.c_str());
}

/// What keeps `c` (planned as `s`) from preregistration, in the order they are found.
std::vector<PlanRefusal> plan_refusals(const Campaign& c, const EnginePreview& engine, const PlanSensitivity& sens,
                                       const CommandEnv& env) {
  std::vector<PlanRefusal> out;
  if (const auto why = check_variant_kernels(c, env.image_dir()); !why)
    out.push_back({PlanRefusalKind::same_kernel, why.error().message, "the variants boot the same kernel"});
  if (!engine.capacity.ok) out.push_back({PlanRefusalKind::capacity, engine.capacity.refusal(), "capacity refused"});
  // The guests' kernel against the pilot's, where plan time knows it (the engine's built image).
  if (const auto why = check_pilot_image_kernel(c, engine.capabilities.kernel_known_before_boot, env.image_dir()); !why)
    out.push_back({PlanRefusalKind::pilot_kernel, why.error().message, "the guest kernel is not the pilot's"});
  if (sens.refusal && sens.refusal->kind == SensitivityRefusal::Kind::insensitive)
    out.push_back({PlanRefusalKind::insensitive, sens.refusal->why, "the design cannot detect its tolerances"});
  return out;
}

/// After the design: each refusal with its remedy, and where the plan went. A preview warns
/// (ok); preregistration refuses (could_not_run).
CommandOutcome report_outcome(const PlanRequest& r, const std::vector<PlanRefusal>& refusals, const CommandEnv& env) {
  if (r.db.empty()) {
    for (const auto& x : refusals)
      std::fprintf(env.out, "NOT PLANNABLE AS IS (`harness plan FILE DB` and `harness run` refuse it): %s",
                   x.why.c_str());
    std::fprintf(env.out, "stored nothing: no DB given (`harness plan FILE DB` preregisters this plan%s)\n",
                 refusals.empty() ? "" : " once nothing above refuses it");
    return CommandOutcome::ok;
  }
  if (refusals.empty()) {
    std::fprintf(env.out, "stored in %s\n", r.db.c_str());
    return CommandOutcome::ok;
  }
  std::string what;
  for (const auto& x : refusals) {
    std::fprintf(env.err, "harness plan: %s", x.why.c_str());
    what += (what.empty() ? "" : "; ") + x.what;
  }
  std::fprintf(env.out, "stored nothing: %s\n", what.c_str());
  return CommandOutcome::could_not_run;
}

}  // namespace

CommandOutcome plan_command(Campaign c, const PlanRequest& r, const CommandEnv& env) {
  c.dose_pipeline_test = r.pipeline_test_dose;
  const bool dirty_preview = r.db.empty() && c.pinned_commit == "build" && env.build.source_dirty;
  resolve_build_pin(c, env.build.source_commit, env.build.source_dirty, /*preview=*/r.db.empty());
  // Capacity before anything is stored (harness/pool/capacity.hpp); a host that does not
  // answer within its engine's deadline is not judged (a lab is planned offline).
  const auto engine = preview_engine(c, r.hosts, r.db);
  const auto s = plan(c);
  if (!r.variance_from.empty()) env.open_db(r.variance_from);
  // What the planned pairs can detect (plan_sensitivity.hpp).
  const auto sens = plan_sensitivity(c, s, r.variance_from);
  const auto refusals = plan_refusals(c, engine, sens, env);
  print_plan(c, s, r, engine, sens, dirty_preview, env);
  if (sens.refusal && sens.refusal->kind == SensitivityRefusal::Kind::wrong_db) {  // bad input, preview or not
    std::fprintf(env.err, "harness plan: %s", sens.refusal->why.c_str());
    std::fprintf(env.out, "stored nothing: --variance-from %s gives no noise\n", r.variance_from.c_str());
    return CommandOutcome::could_not_run;
  }
  if (!r.out.empty() && (r.db.empty() || refusals.empty())) {
    std::ofstream o(r.out);
    o << s.json_text << "\n";
    if (!o) throw std::runtime_error(r.out + ": cannot write");
  }
  if (!r.db.empty() && refusals.empty()) {
    results::Db d(r.db, results::Db::Mode::Create);
    store_plan(d, c, s);
  }
  return report_outcome(r, refusals, env);
}

}  // namespace harness::campaign
