// Planning: campaign -> seeded schedule -> canonical JSON -> SHA-256.
#include "harness/campaign/plan/schedule.hpp"
#include "harness/json/limited_parse.hpp"

#include "harness/campaign/model/dose.hpp"
#include "harness/campaign/plan/pilot_dose.hpp"
#include "harness/campaign/plan/pilot_match.hpp"
#include "harness/campaign/plan/seeding.hpp"
#include "harness/case/control/arm.hpp"
#include "harness/case/control/policy.hpp"
#include "harness/case/spec/spec_writer.hpp"
#include "harness/digest/sha256.hpp"
#include "harness/kernel/size.hpp"

#include <stdexcept>

namespace harness::campaign {
namespace {

using harness::kernel::kMiB;

nlohmann::json row_json(const ScheduledCase& r) {
  return {{"case_id", r.case_id},
          {"ordinal", r.ordinal},
          {"vm_position", r.vm_position},
          {"vm", r.vm},
          {"regime", r.regime},
          {"repeat", r.repeat},
          {"triplet_id", r.triplet_id ? nlohmann::json(*r.triplet_id) : nlohmann::json(nullptr)},
          {"configuration", r.configuration},
          {"dose_bytes", r.dose_bytes ? nlohmann::json(*r.dose_bytes) : nlohmann::json(nullptr)},
          {"spec", r.spec}};
}

}  // namespace

nlohmann::json case_spec(const Campaign& c, const std::string& case_id, const std::string& vm, const Regime& regime,
                         int repeat, const std::optional<std::string>& triplet_id, const Arm& arm,
                         std::optional<std::int64_t> dose_bytes, const Variant* variant,
                         const std::string& pair_id) {
  // Workload seed: shared by the cases of one matched triplet (same vm, regime, repeat),
  // so the three configurations see the same pressure and canary request streams.
  const std::uint64_t wseed = fnv1a(fnv1a(fnv1a(c.seed, vm), regime.name), std::to_string(repeat)) & 0x7fffffffULL;
  auto mib = [](const std::optional<std::int64_t>& v) { return v ? std::optional(*v * kMiB) : std::nullopt; };
  harness::case_::CaseSpec s;
  s.case_id = case_id;
  s.campaign = c.name;
  s.vm = vm;
  s.regime = regime.name;
  s.repeat = repeat;
  s.triplet_id = triplet_id;
  s.configuration = arm.name;
  s.policy = arm.policy;
  if (!arm.study) {
    s.policy_in_spec = true;
    s.policy_params = arm.params;
  }
  s.dose_bytes = dose_bytes;
  s.pinned_commit = c.pinned_commit;
  s.vm_vcpus = c.vcpus;
  s.vm_memory_mib = c.memory_mib;
  s.phases = {c.warmup_s, c.pressure_s, c.recovery_s};
  // The regime's pressure (its own where it declares it, else the campaign's: campaign.hpp Regime).
  s.cgroups = {c.cgroup_parent, mib(regime.bg_memory_max_mib), mib(c.bg_memory_high_mib), mib(c.fg_memory_max_mib),
               mib(c.fg_memory_low_mib)};
  s.backend = {c.zram_disksize_mib * kMiB, c.zram_algorithm, c.zram_priority, c.swapfile_path, c.swapfile_priority,
               c.delayed_swapfile};
  s.pressure = {regime.allocation_mib * kMiB, regime.rate_mib_s, regime.active_set_mib * kMiB, regime.active_set_slide_mib_s,
                regime.contents, wseed};
  s.canaries.period_ms = c.canary_period_ms;
  s.canaries.compute_hot_bytes = c.compute_hot_mib * kMiB;
  s.canaries.sqlite_db_path = c.sqlite_db_path;
  s.canaries.sqlite_queries_per_request = c.sqlite_queries_per_request;
  s.canaries.seed = wseed;  // sqlite_offset_ms: the SPEC.md v2 default (T0 + 50 ms)
  s.trigger = {c.trigger_window_ms, c.trigger_min_increase_us, c.trigger_consecutive_windows};
  s.telemetry_period_ms = c.telemetry_period_ms;  // telemetry_offset_ms: SPEC.md v2 default (T0 + 25 ms)
  s.restoration_timeout_s = c.restoration_timeout_s;
  if (variant) {  // ab-pairs (SPEC.md "variant"); absent otherwise
    harness::case_::VariantSpec v;
    v.name = variant->name;
    v.pair_id = pair_id;
    v.sysctls = variant->sysctls;
    v.sysfs = variant->sysfs;
    v.cmdline = variant->cmdline;
    if (!variant->kernel_release.empty()) v.kernel_release = variant->kernel_release;
    if (!variant->kernel_image_dir.empty()) v.kernel_image_dir = variant->kernel_image_dir;
    s.variant = std::move(v);
  }
  return harness::case_::spec_json(s);
}

namespace {
/// {name, policy, params, sha256} of `arm` as its cases run it (from the first case's spec:
/// a study arm's dose is the design's), sha256 over the canonical arm JSON (case/arm.hpp).
nlohmann::json plan_arm_json(const Arm& arm, const Schedule& s) {
  for (const auto& k : s.cases)
    if (k.configuration == arm.name) {
      const auto spec = harness::case_::parse_spec(k.spec.dump(), "plan of " + s.campaign);
      nlohmann::json j = harness::case_::arm_json(spec.configuration, spec.policy, spec.policy_params);
      j["sha256"] = harness::digest::sha256_hex(j.dump());
      return j;
    }
  throw std::logic_error("plan: arm " + arm.name + " has no case");
}
}  // namespace

namespace {

/// The dose the design's study arm takes and where it came from.
struct PlannedDose {
  std::optional<std::int64_t> bytes;  ///< nullopt when no arm takes the design's dose
  std::optional<PilotDose> pilot;     ///< set when chosen from a pilot DB (design.dose_mib.from_pilot)
  PilotMatch match;                   ///< the pilot's settings against the campaign's (pilot_match.hpp)
};

/// The design's dose: design.dose_mib, or the pilot rule's choice over the pilot DB (checked
/// against the pilot's settings and the study arm's rule; throws CampaignError).
PlannedDose resolve_design_dose(const Campaign& c) {
  PlannedDose d;
  if (!(c.design == "matched-triplets" || c.design == "matched-blocks" || c.design == "ab-pairs") ||
      !needs_design_dose(c))
    return d;
  if (c.dose_from_pilot.empty()) {
    d.bytes = dose_bytes(*c.dose_mib);
    return d;
  }
  d.pilot = resolve_pilot_dose(c.dose_from_pilot, {c.eligibility_max_duration_s, c.eligibility_min_achieved_ratio, c.eligibility_reading},
                               c.dose_pipeline_test);
  d.bytes = d.pilot->dose_bytes;
  // The pilot ran with this campaign's settings, or the differences are declared (pilot_match.hpp).
  d.match = match_pilot(c, *d.bytes);
  // The chosen dose meets the study arm's rule in this campaign too (its bg limit may be
  // the pilot's or not): dose.hpp check_design_dose.
  if (auto why = check_design_dose(c, *d.bytes); !why)
    throw CampaignError(c.file + ": field design.dose_mib.from_pilot: the pilot's dose (" + std::to_string(*d.bytes) +
                        " bytes): " + why.error().message);
  return d;
}

/// One VM's cases of the matched designs: its (regime, repeat) blocks in seeded order, each
/// block's arms in seeded order (one triplet per block).
std::vector<ScheduledCase> matched_cases(const Campaign& c, const std::string& vm, const StratumSizes& strata,
                                         std::optional<std::int64_t> design_bytes, boost::random::mt19937_64& rng) {
  struct Block {
    const Regime* regime;
    int repeat;
  };
  std::vector<Block> blocks;
  for (const auto& g : c.regimes)
    for (int r = 1; r <= strata.at(vm).at(g.name); ++r) blocks.push_back({&g, r});
  seeded_shuffle(blocks, rng);
  std::vector<ScheduledCase> seq;
  for (const auto& t : blocks) {
    std::vector<const Arm*> arms;
    for (const auto& a : c.arms) arms.push_back(&a);
    seeded_shuffle(arms, rng);
    const std::string tid = vm + "/" + t.regime->name + "/" + std::to_string(t.repeat);
    for (const Arm* arm : arms) {
      ScheduledCase k;
      k.case_id = c.name + "-" + vm + "-" + t.regime->name + "-r" + std::to_string(t.repeat) + "-" + arm->name;
      k.vm = vm;
      k.regime = t.regime->name;
      k.repeat = t.repeat;
      k.triplet_id = tid;
      k.configuration = arm->name;
      k.dose_bytes = case_dose_bytes(*arm, design_bytes);
      k.spec = case_spec(c, k.case_id, vm, *t.regime, t.repeat, k.triplet_id, *arm, k.dose_bytes);
      seq.push_back(std::move(k));
    }
  }
  return seq;
}

/// For each of `n` pairs, whether the baseline runs first (the counterbalancing of pair_cases).
std::vector<int> baseline_first_order(std::size_t n, boost::random::mt19937_64& rng) {
  std::vector<int> baseline_first(n);
  for (std::size_t i = 0; i < baseline_first.size(); ++i) baseline_first[i] = i % 2 == 0;
  if (baseline_first.size() % 2) baseline_first.back() = boost::random::uniform_int_distribution<int>(0, 1)(rng);
  seeded_shuffle(baseline_first, rng);
  return baseline_first;
}

/// One VM's cases of ab-pairs.
/// Blocks (regime, repeat, configuration) in seeded order; within each block the pair
/// (one case per variant). The pair shares the workload seed (case_spec: it depends on
/// vm, regime and repeat only). Variant order is counterbalanced per VM (ours): half the
/// pairs run the baseline first, which ones the seed decides (with an odd count the
/// last half-pair is a seeded coin flip). Independent coin flips per pair put one
/// variant first in every pair of a 6-pair VM 1 time in 32, so drift along the run
/// would fall on one variant only.
std::vector<ScheduledCase> pair_cases(const Campaign& c, const std::string& vm, std::optional<std::int64_t> design_bytes,
                                      boost::random::mt19937_64& rng) {
  struct Block {
    const Regime* regime;
    int repeat;
    const Arm* arm;
  };
  std::vector<Block> blocks;
  for (const auto& g : c.regimes)
    for (int r = 1; r <= c.repeats; ++r)
      for (const auto& a : c.arms) blocks.push_back({&g, r, &a});
  seeded_shuffle(blocks, rng);
  const std::vector<int> baseline_first = baseline_first_order(blocks.size(), rng);
  std::vector<ScheduledCase> seq;
  for (std::size_t bi = 0; bi < blocks.size(); ++bi) {
    const Block& b = blocks[bi];
    std::vector<const Variant*> order{&c.variants.at(0), &c.variants.at(1)};  // baseline, candidate
    if (!baseline_first[bi]) std::swap(order[0], order[1]);
    const std::string stem = vm + "/" + b.regime->name + "/" + std::to_string(b.repeat);
    const std::string pair_id = stem + "/" + b.arm->name;
    for (const Variant* v : order) {
      ScheduledCase k;
      k.case_id = c.name + "-" + vm + "-" + b.regime->name + "-r" + std::to_string(b.repeat) + "-" + b.arm->name +
                  "-" + v->name;
      k.vm = vm;
      k.regime = b.regime->name;
      k.repeat = b.repeat;
      k.triplet_id = stem + "/" + v->name;  // each variant's cases form their own triplets
      k.configuration = b.arm->name;
      k.dose_bytes = case_dose_bytes(*b.arm, design_bytes);
      k.spec = case_spec(c, k.case_id, vm, *b.regime, b.repeat, k.triplet_id, *b.arm, k.dose_bytes, v, pair_id);
      seq.push_back(std::move(k));
    }
  }
  return seq;
}

/// One VM's cases of the pilot (dose-finding): the study's bounded-reclaim only, each
/// dose x regime x repeat, in seeded order.
std::vector<ScheduledCase> pilot_cases(const Campaign& c, const std::string& vm, boost::random::mt19937_64& rng) {
  std::vector<ScheduledCase> seq;
  const Arm& arm = c.arms.at(0);
  for (const auto& g : c.regimes)
    for (auto dose : c.pilot_doses_mib)
      for (int r = 1; r <= c.repeats; ++r) {
        ScheduledCase k;
        k.case_id = c.name + "-" + vm + "-" + g.name + "-r" + std::to_string(r) + "-d" + std::to_string(dose) + "M-" +
                    arm.name;
        k.vm = vm;
        k.regime = g.name;
        k.repeat = r;
        k.configuration = arm.name;
        k.dose_bytes = dose_bytes(dose);
        k.spec = case_spec(c, k.case_id, vm, g, r, std::nullopt, arm, k.dose_bytes);
        seq.push_back(std::move(k));
      }
  seeded_shuffle(seq, rng);
  return seq;
}

/// Appends the VMs' sequences to s.cases VM-interleaved (position-major), so ordinals
/// reflect wall-clock order when the VMs run in parallel.
void interleave(std::vector<std::vector<ScheduledCase>>& per_vm, Schedule& s) {
  std::size_t longest = 0;
  for (const auto& v : per_vm) longest = std::max(longest, v.size());
  for (std::size_t pos = 0; pos < longest; ++pos)
    for (auto& v : per_vm)
      if (pos < v.size()) {
        v[pos].vm_position = static_cast<int>(pos);
        v[pos].ordinal = static_cast<int>(s.cases.size());
        s.cases.push_back(v[pos]);
      }
}

/// The plan's "regression" member (ab-pairs): alpha and tolerances, and the sequential
/// check's settings when declared.
nlohmann::json regression_json(const Campaign& c) {
  nlohmann::json tol = nlohmann::json::object();
  for (const auto& t : c.tolerances)
    tol[t.metric] = {{"max_ratio", t.max_ratio ? nlohmann::json(*t.max_ratio) : nlohmann::json(nullptr)},
                     {"min_ratio", t.min_ratio ? nlohmann::json(*t.min_ratio) : nlohmann::json(nullptr)}};
  return {{"alpha", c.regression_alpha}, {"tolerances", tol}};
}

/// The plan's "dose_from_pilot" member: the pilot DB's hash and dose, and what was declared.
nlohmann::json dose_from_pilot_json(const Campaign& c, const PilotDose& pilot, const PilotMatch& match) {
  nlohmann::json j = {{"pilot_db_sha256", pilot.sha256_hex}, {"dose_bytes", pilot.dose_bytes}};
  // Only when declared (harness plan --pipeline-test-dose): other plans keep their hash.
  if (c.dose_pipeline_test) j["pipeline_test"] = {{"declared", true}, {"pilot_accelerators", pilot.accelerators}};
  // Declared differences from the pilot (design.dose_mib.accept_differences), only when some
  // exist: plans of a pilot that matches keep their hash.
  if (!match.accepted.empty()) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& d : match.accepted) a.push_back({{"setting", d.path}, {"pilot", d.theirs}, {"campaign", d.ours}});
    j["accepted_differences"] = a;
  }
  if (match.pilot_rule_dose_bytes) j["pilot_rule_dose_bytes"] = *match.pilot_rule_dose_bytes;
  return j;
}

/// The canonical plan document (its dump is what the SHA-256 covers). Members other than
/// the first ones are added only when used, so that older plans keep their hash.
nlohmann::json plan_document(const Campaign& c, const Schedule& s, const PlannedDose& dose) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& k : s.cases) rows.push_back(row_json(k));
  nlohmann::json doc = {
      {"format", "reclaim-harness-schedule/1"},
      {"campaign", c.name},
      {"seed", c.seed},
      {"design", c.design},
      {"provider", c.provider},
      {"vms", c.vms},
      {"max_infra_retries", c.max_infra_retries},
      {"analysis",
       {{"bootstrap_replicates", c.bootstrap_replicates}, {"alpha", c.alpha}, {"comparisons", c.comparisons}}},
      {"eligibility", c.eligibility_json()},
      {"cases", rows}};
  // Only when an arm is declared (not a study arm by name), so the study's plans keep their hash.
  if (std::any_of(c.arms.begin(), c.arms.end(), [](const Arm& a) { return !a.study; })) {
    nlohmann::json arms = nlohmann::json::array();
    for (const auto& a : c.arms) arms.push_back(plan_arm_json(a, s));
    doc["arms"] = arms;
  }
  // Added only when used, so plans of the `repeats` design with a fixed dose keep their hash.
  if (c.triplets_per_regime > 0) {
    doc["triplets_per_regime"] = c.triplets_per_regime;
    doc["allocation"] = s.strata;
  }
  if (c.design == "ab-pairs") {
    doc["regression"] = regression_json(c);
    // Only for `harness check --until-decided` (check_sequential.hpp): other plans keep their hash.
    if (c.sequential)
      doc["sequential"] = {{"max_pairs", c.sequential->max_pairs},
                           {"first_repeats", c.sequential->first_repeats},
                           {"cap_repeats", c.sequential->cap_repeats}};
  }
  if (dose.pilot) doc["dose_from_pilot"] = dose_from_pilot_json(c, *dose.pilot, dose.match);
  return doc;
}

}  // namespace

Schedule plan(const Campaign& c) {
  Schedule s;
  s.campaign = c.name;
  s.seed = c.seed;
  const PlannedDose dose = resolve_design_dose(c);
  std::vector<std::string> regime_names;
  for (const auto& g : c.regimes) regime_names.push_back(g.name);
  s.strata = c.triplets_per_regime > 0
                 ? balanced_allocation(c.seed, c.vms, regime_names, c.triplets_per_regime)
                 : uniform_allocation(c.vms, regime_names, c.repeats);
  std::vector<std::vector<ScheduledCase>> per_vm;
  for (const auto& vm : c.vms) {
    boost::random::mt19937_64 rng(fnv1a(c.seed, vm));
    if (c.design == "matched-triplets" || c.design == "matched-blocks")
      per_vm.push_back(matched_cases(c, vm, s.strata, dose.bytes, rng));
    else if (c.design == "ab-pairs")
      per_vm.push_back(pair_cases(c, vm, dose.bytes, rng));
    else
      per_vm.push_back(pilot_cases(c, vm, rng));
  }
  interleave(per_vm, s);
  s.json_text = plan_document(c, s, dose).dump();
  s.sha256_hex = harness::digest::sha256_hex(s.json_text);
  return s;
}

Schedule schedule_from_json(const std::string& json_text) {
  Schedule s;
  try {
    const auto doc = harness::json::parse(json_text, "schedule JSON");
    if (doc.at("format") != "reclaim-harness-schedule/1") throw std::runtime_error("unknown schedule format");
    s.campaign = doc.at("campaign").get<std::string>();
    s.seed = doc.at("seed").get<std::uint64_t>();
    for (const auto& r : doc.at("cases")) {
      ScheduledCase k;
      k.case_id = r.at("case_id").get<std::string>();
      k.ordinal = r.at("ordinal").get<int>();
      k.vm_position = r.at("vm_position").get<int>();
      k.vm = r.at("vm").get<std::string>();
      k.regime = r.at("regime").get<std::string>();
      k.repeat = r.at("repeat").get<int>();
      if (!r.at("triplet_id").is_null()) k.triplet_id = r.at("triplet_id").get<std::string>();
      k.configuration = r.at("configuration").get<std::string>();
      if (!r.at("dose_bytes").is_null()) k.dose_bytes = r.at("dose_bytes").get<std::int64_t>();
      k.spec = r.at("spec");
      s.cases.push_back(std::move(k));
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("schedule JSON malformed: ") + e.what());
  }
  s.json_text = json_text;
  s.sha256_hex = harness::digest::sha256_hex(json_text);
  return s;
}

}  // namespace harness::campaign
