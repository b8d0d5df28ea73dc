// Arms in the campaign (docs/CAMPAIGN.md "Arms"): `arms:` beside the study's
// `configurations:`, arms checked against the policy registry with FILE:LINE:COL errors,
// matched blocks of k arms in seeded order, declared comparisons checked against the arms run,
// and the plan JSON's `arms` (policy, params, SHA-256) only when an arm is declared.
#include "analysis/data/study_facts.hpp"
#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/model/campaign_arms.hpp"
#include "harness/campaign/plan/schedule.hpp"
#include "harness/case/control/policy.hpp"
#include "harness/case/spec/spec.hpp"
#include "harness/digest/sha256.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "tests/common/small_campaign.hpp"

namespace hc = harness::campaign;
using ::testing::HasSubstr;

namespace {

const std::string kProvider = "{kind: hosts, vms: [vm0, vm1]}";

/// small_campaign_yaml with its `configurations:` line replaced by `arms_block` and the design
/// mapping by `design` (whole flow mapping body) and `tail` after it.
std::string with_arms(const std::string& arms_block, const std::string& design, const std::string& tail = "") {
  std::string text = test_support::small_campaign_yaml(kProvider, "repeats: 1, dose_mib: 96", tail);
  const std::string conf = "configurations: [static-zram, delayed-activation, bounded-reclaim]\n";
  text.replace(text.find(conf), conf.size(), arms_block);
  const std::string d = "design: {kind: matched-triplets, repeats: 1, dose_mib: 96}\n";
  text.replace(text.find(d), d.size(), "design: {" + design + "}\n");
  return text;
}

std::string error_of(const std::string& text) {
  try {
    hc::parse_campaign(text, "arms.yaml");
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

const std::string kFiveArms =
    "arms:\n"
    "  - static-zram\n"
    "  - delayed-activation\n"
    "  - bounded-reclaim\n"
    "  - {name: reclaim-32, policy: bounded-reclaim, params: {dose_mib: 32}}\n"
    "  - {name: reclaim-64, policy: bounded-reclaim, params: {dose_mib: 64}}\n";

}  // namespace

// The study's arm names are written in two places, by design: registered with their policies
// (harness/case/policies/, study_position) and as the study's published facts
// (analysis/data/study_facts.hpp, which the analysis reads without the registry). Both spell the
// same names in the same order, and the positions the facts name are the registry's arms.
TEST(Arms, TheRegistrysStudyArmsAreTheStudyFacts) {
  std::vector<std::string> facts;
  for (const auto& a : analysis::kStudyArms) facts.push_back(a.name);
  ASSERT_EQ(facts.size(), 3u);
  EXPECT_EQ(harness::case_::study_arms(), facts);
  EXPECT_EQ(hc::study_treatment(), analysis::kStudyArms[analysis::kStudyTreatment].name);
  for (std::size_t i = 0; i < facts.size(); ++i) {
    const auto* p = harness::case_::find_policy(facts[i]);
    ASSERT_NE(p, nullptr) << facts[i];
    EXPECT_EQ(p->study_position, static_cast<int>(i) + 1) << facts[i];
  }
}

TEST(Arms, StudyArmsByNameAreTheConfigurationsSpelling) {
  const auto a = hc::parse_campaign(test_support::small_campaign_yaml(kProvider), "a.yaml");
  const auto b = hc::parse_campaign(
      with_arms("arms: [bounded-reclaim, static-zram, delayed-activation]\n", "kind: matched-triplets, repeats: 1, dose_mib: 96"),
      "a.yaml");
  ASSERT_EQ(a.arms.size(), 3u);
  // configurations: put in the study's order; arms: kept in the file's order.
  EXPECT_EQ(hc::arm_names(a), harness::case_::study_arms());
  EXPECT_EQ(hc::arm_names(b), (std::vector<std::string>{"bounded-reclaim", "static-zram", "delayed-activation"}));
  for (const auto& arm : a.arms) EXPECT_TRUE(arm.study) << arm.name;
  // The study's spelling writes no `arms` and no `policy`: the plans of the study keep their hash.
  const auto plan = hc::plan(a);
  EXPECT_EQ(plan.json_text.find("\"arms\""), std::string::npos);
  for (const auto& k : plan.cases) EXPECT_FALSE(k.spec.contains("policy")) << k.case_id;
  EXPECT_EQ(a.comparisons, hc::study_comparisons());
  EXPECT_FALSE(a.comparisons_declared);
}

TEST(Arms, OnePolicyInSeveralArmsWithItsOwnParameters) {
  const auto c = hc::parse_campaign(with_arms(kFiveArms, "kind: matched-blocks, repeats: 2, dose_mib: 96"), "a.yaml");
  ASSERT_EQ(c.arms.size(), 5u);
  EXPECT_EQ(c.arms[3].policy, "bounded-reclaim");
  EXPECT_EQ(c.arms[3].params, (nlohmann::json{{"dose_mib", 32}}));
  const auto s = hc::plan(c);
  // 2 VMs x 1 regime x 2 repeats = 4 blocks of 5 cases.
  ASSERT_EQ(s.cases.size(), 20u);
  std::map<std::string, std::set<std::string>> per_block;
  for (const auto& k : s.cases) {
    per_block[*k.triplet_id].insert(k.configuration);
    EXPECT_THAT(k.case_id, ::testing::EndsWith("-" + k.configuration));
    const auto spec = harness::case_::parse_spec(k.spec.dump(), k.case_id);
    EXPECT_EQ(spec.configuration, k.configuration);
    if (k.configuration == "reclaim-32") {
      EXPECT_TRUE(spec.policy_in_spec);
      EXPECT_EQ(spec.policy, "bounded-reclaim");
      EXPECT_EQ(spec.policy_params.at("dose_mib"), 32);
      EXPECT_FALSE(k.dose_bytes);
    }
    if (k.configuration == "bounded-reclaim") {  // the study's: the design's dose, no policy object
      EXPECT_FALSE(k.spec.contains("policy"));
      EXPECT_EQ(k.dose_bytes, 96 * 1048576LL);
      EXPECT_EQ(spec.policy_params.at("dose_mib"), 96);
    }
  }
  ASSERT_EQ(per_block.size(), 4u);
  for (const auto& [id, arms] : per_block) EXPECT_EQ(arms.size(), 5u) << id;
  // The plan lists every arm with its policy, parameters and the SHA-256 of its canonical JSON.
  const auto doc = nlohmann::json::parse(s.json_text);
  ASSERT_TRUE(doc.contains("arms"));
  ASSERT_EQ(doc["arms"].size(), 5u);
  for (const auto& arm : doc["arms"]) {
    nlohmann::json canon{{"name", arm["name"]}, {"params", arm["params"]}, {"policy", arm["policy"]}};
    EXPECT_EQ(arm["sha256"], harness::digest::sha256_hex(canon.dump())) << arm.dump();
  }
  EXPECT_EQ(doc["arms"][2]["params"], (nlohmann::json{{"dose_mib", 96}}));
  EXPECT_EQ(doc["design"], "matched-blocks");
}

TEST(Arms, ArmOrderWithinEachBlockIsSeededAndVaries) {
  const auto c = hc::parse_campaign(with_arms(kFiveArms, "kind: matched-blocks, repeats: 6, dose_mib: 96"), "a.yaml");
  const auto s1 = hc::plan(c), s2 = hc::plan(c);
  EXPECT_EQ(s1.sha256_hex, s2.sha256_hex);
  std::map<std::string, std::string> order;  // block -> arm order
  for (const auto& k : s1.cases) order[*k.triplet_id] += k.configuration + ",";
  std::set<std::string> distinct;
  for (const auto& [id, o] : order) distinct.insert(o);
  EXPECT_GT(distinct.size(), 1u) << "every block ran its arms in one order";
  // Another parameter value is another plan.
  std::string other = kFiveArms;
  other.replace(other.find("dose_mib: 64"), 12, "dose_mib: 48");
  const auto c2 = hc::parse_campaign(with_arms(other, "kind: matched-blocks, repeats: 6, dose_mib: 96"), "a.yaml");
  EXPECT_NE(hc::plan(c2).sha256_hex, s1.sha256_hex);
}

TEST(Arms, ErrorsNameFileLineColumnAndField) {
  // Unknown policy: line 10 is the second arm (the file's arms block starts on line 9).
  EXPECT_THAT(error_of(with_arms("arms:\n  - static-zram\n  - {name: x1, policy: no-such-policy}\n", "kind: matched-blocks, repeats: 1",
                                 "analysis: {comparisons: [{canary: compute, treatment: x1, comparator: static-zram}]}\n")),
              ::testing::AllOf(HasSubstr("arms.yaml:"), HasSubstr("field arms[1].policy"), HasSubstr("'no-such-policy' is not a registered policy")));
  EXPECT_THAT(error_of(with_arms("arms:\n  - static-zram\n  - {name: r, policy: bounded-reclaim, params: {dose_mb: 32}}\n",
                                 "kind: matched-blocks, repeats: 1")),
              ::testing::AllOf(HasSubstr("field arms[1].params.dose_mb"), HasSubstr("not a parameter of policy bounded-reclaim")));
  EXPECT_THAT(error_of(with_arms("arms:\n  - static-zram\n  - {name: r, policy: bounded-reclaim, params: {dose_mib: fast}}\n",
                                 "kind: matched-blocks, repeats: 1")),
              ::testing::AllOf(HasSubstr("field arms[1].params.dose_mib"), HasSubstr("must be a number")));
  EXPECT_THAT(error_of(with_arms("arms:\n  - static-zram\n  - {name: r, policy: bounded-reclaim}\n", "kind: matched-blocks, repeats: 1")),
              HasSubstr("needs parameter 'dose_mib'"));
  EXPECT_THAT(error_of(with_arms("arms:\n  - static-zram\n  - {name: Bad_Name, policy: static-zram, params: {}}\n",
                                 "kind: matched-blocks, repeats: 1")),
              HasSubstr("field arms[1].name"));
  EXPECT_THAT(error_of(with_arms("arms: [static-zram, senpai-ish]\n", "kind: matched-blocks, repeats: 1")),
              ::testing::AllOf(HasSubstr("field arms[1]"), HasSubstr("is not one of the study's arms")));
  EXPECT_THAT(error_of(with_arms("arms: [static-zram, static-zram]\n", "kind: matched-blocks, repeats: 1")),
              HasSubstr("duplicate arm name"));
  EXPECT_THAT(error_of(with_arms("configurations: [static-zram]\narms: [static-zram]\n", "kind: matched-blocks, repeats: 1")),
              HasSubstr("not both"));
}

TEST(Arms, DeclaredComparisonsMustNameArmsTheCampaignRuns) {
  const std::string arms = "arms:\n  - static-zram\n  - {name: r32, policy: bounded-reclaim, params: {dose_mib: 32}}\n";
  EXPECT_THAT(error_of(with_arms(arms, "kind: matched-blocks, repeats: 1",
                                 "analysis: {comparisons: [{canary: compute, treatment: r32, comparator: delayed-activation}]}\n")),
              ::testing::AllOf(HasSubstr("field analysis.comparisons[0]"), HasSubstr("names arm 'delayed-activation', which this campaign does not run")));
  // A near miss gets its suggestion, as an unknown policy or parameter does.
  EXPECT_THAT(error_of(with_arms(arms, "kind: matched-blocks, repeats: 1",
                                 "analysis: {comparisons: [{canary: compute, treatment: r23, comparator: static-zram}]}\n")),
              HasSubstr("names arm 'r23', which this campaign does not run (did you mean 'r32'?) (its arms: "));
  // Without declared comparisons, the study's four need the study's arms.
  EXPECT_THAT(error_of(with_arms(arms, "kind: matched-blocks, repeats: 1")), HasSubstr("declare analysis.comparisons"));
  EXPECT_THAT(error_of(with_arms(arms, "kind: matched-blocks, repeats: 1",
                                 "analysis: {comparisons: [compute:r32/r32]}\n")),
              HasSubstr("treatment and comparator are the same arm"));
  const auto c = hc::parse_campaign(
      with_arms(arms, "kind: matched-blocks, repeats: 1",
                "analysis: {comparisons: [{canary: sqlite, treatment: r32, comparator: static-zram}, compute:r32/static-zram]}\n"),
      "a.yaml");
  EXPECT_TRUE(c.comparisons_declared);
  EXPECT_EQ(c.comparisons, (std::vector<std::string>{"sqlite:r32/static-zram", "compute:r32/static-zram"}));
  const auto doc = nlohmann::json::parse(hc::plan(c).json_text);
  EXPECT_EQ(doc["analysis"]["comparisons"], (nlohmann::json{"sqlite:r32/static-zram", "compute:r32/static-zram"}));
}

TEST(Arms, ComparisonSpellingsRoundTrip) {
  for (const auto& text : {"compute:static-zram", "sqlite:delayed-activation", "compute:senpai/static-zram", "sqlite:a/b"}) {
    const auto k = hc::parse_comparison(text);
    ASSERT_TRUE(k) << text;
    EXPECT_EQ(hc::comparison_text(*k), text);
  }
  EXPECT_EQ(hc::parse_comparison("compute:static-zram")->treatment, hc::study_treatment());
  EXPECT_FALSE(hc::parse_comparison("gpu:static-zram"));
  EXPECT_FALSE(hc::parse_comparison("compute:Static"));
  EXPECT_FALSE(hc::parse_comparison("static-zram"));
}

TEST(Arms, TheStudysArmNamesAreTheStudysArms) {
  // Another policy, or the study's policy with other parameters, may not take a study arm's
  // name: the study's comparisons and findings are judged on the arms carrying those names.
  EXPECT_THAT(error_of(with_arms("arms:\n  - {name: static-zram, policy: senpai}\n  - bounded-reclaim\n",
                                 "kind: matched-blocks, repeats: 1, dose_mib: 96")),
              ::testing::AllOf(HasSubstr("field arms[0].name"), HasSubstr("is the name of the study's arm")));
  EXPECT_THAT(error_of(with_arms("arms:\n  - static-zram\n  - {name: bounded-reclaim, policy: bounded-reclaim, params: {dose_mib: 32}}\n",
                                 "kind: matched-blocks, repeats: 1, dose_mib: 96")),
              HasSubstr("write `- bounded-reclaim`"));
  // matched-triplets is the study's spelling for three arms.
  EXPECT_THAT(error_of(with_arms("arms: [static-zram, bounded-reclaim]\n", "kind: matched-triplets, repeats: 1, dose_mib: 96")),
              HasSubstr("use design.kind matched-blocks"));
}

TEST(Arms, MatchedBlocksNeedTwoArmsAndThePilotItsOwnArm) {
  EXPECT_THAT(error_of(with_arms("arms: [static-zram]\n", "kind: matched-blocks, repeats: 1")), HasSubstr("at least two"));
  EXPECT_THAT(error_of(with_arms("arms: [static-zram]\n", "kind: pilot, doses_mib: [16, 32]")),
              HasSubstr("the pilot tests reclaim doses"));
}

// ---- parameters checked against each other and the campaign (PolicyInfo::settings_check) ----------

namespace {

/// with_arms(...) with phases_s.pressure `pressure_s` and the cgroups mapping body `cgroups`.
std::string with_settings(const std::string& arms_block, int pressure_s, const std::string& cgroups = "bg_memory_max_mib: 300") {
  std::string text = with_arms(arms_block, "kind: matched-blocks, repeats: 1, dose_mib: 96",
                               "analysis: {comparisons: [compute:x/static-zram]}\n");
  const std::string phases = "phases_s: {warmup: 1, pressure: 1, recovery: 1}\n";
  text.replace(text.find(phases), phases.size(), "phases_s: {warmup: 1, pressure: " + std::to_string(pressure_s) + ", recovery: 1}\n");
  const std::string cg = "cgroups: {bg_memory_max_mib: 300}\n";
  text.replace(text.find(cg), cg.size(), "cgroups: {" + cgroups + "}\n");
  return text;
}

/// An arms block whose second arm, `x`, is `arm` (a flow mapping's body after the name).
std::string arm_x(const std::string& arm) { return "arms:\n  - static-zram\n  - {name: x, " + arm + "}\n"; }

}  // namespace

// The arms block starts on line 17 of small_campaign_yaml: arm x is on line 19.
TEST(ArmSettings, BoundedReclaimDoseBelowTheBgLimit) {
  EXPECT_EQ(error_of(with_settings(arm_x("policy: bounded-reclaim, params: {dose_mib: 300}"), 30)),
            "arms.yaml:19:59: field arms[1].params.dose_mib: 300 MiB must be below cgroups.bg_memory_max_mib "
            "(300 MiB): bg never holds more than its memory.max to reclaim");
  EXPECT_EQ(error_of(with_settings(arm_x("policy: bounded-reclaim, params: {dose_mib: 299}"), 30)), "");
}

TEST(ArmSettings, BoundedLoopStepWithinTheCapAndTheCapWithinTheBgLimit) {
  EXPECT_EQ(error_of(with_settings(arm_x("policy: bounded-loop, params: {step_mib: 64, total_cap_mib: 32}"), 30)),
            "arms.yaml:19:56: field arms[1].params.step_mib: 64 MiB must be at most total_cap_mib (32 MiB): no "
            "window could ask a whole step");
  EXPECT_EQ(error_of(with_settings(arm_x("policy: bounded-loop, params: {total_cap_mib: 301}"), 30)),
            "arms.yaml:19:61: field arms[1].params.total_cap_mib: 301 MiB must be at most "
            "cgroups.bg_memory_max_mib (300 MiB): bg never holds more than its memory.max to reclaim");
  EXPECT_EQ(error_of(with_settings(arm_x("policy: bounded-loop, params: {step_mib: 32, total_cap_mib: 300}"), 30)), "");
}

TEST(ArmSettings, SenpaiAndMemfluxDecideWithinThePressurePhaseOnTicks) {
  // senpai's default interval (6 s) against a 6 s pressure phase: the arm (no params) is the place.
  EXPECT_EQ(error_of(with_settings(arm_x("policy: senpai"), 6)),
            "arms.yaml:19:5: field arms[1].params.interval_s: 6 s must be shorter than phases_s.pressure (6 "
            "s): no decision it paces would fall in the pressure phase");
  EXPECT_EQ(error_of(with_settings(arm_x("policy: senpai, params: {interval_s: 3}"), 6)), "");
  EXPECT_EQ(error_of(with_settings(arm_x("policy: memflux-guard, params: {interval_ms: 30000}"), 30)),
            "arms.yaml:19:60: field arms[1].params.interval_ms: 30000 ms must be shorter than "
            "phases_s.pressure (30 s): no decision it paces would fall in the pressure phase");
  EXPECT_EQ(error_of(with_settings(arm_x("policy: memflux-guard, params: {interval_ms: 500}"), 30)),
            "arms.yaml:19:60: field arms[1].params.interval_ms: 500 ms is shorter than one telemetry tick "
            "(telemetry_period_ms 1000): a policy decides on ticks");
  EXPECT_THAT(error_of(with_settings(arm_x("policy: memflux-guard, params: {step_mib: 512}"), 30)),
            ::testing::HasSubstr("field arms[1].params.step_mib: 512 MiB must be at most cgroups.bg_memory_max_mib"));
  EXPECT_EQ(error_of(with_settings(arm_x("policy: memflux-guard"), 30)), "");
}

TEST(ArmSettings, MemoryHighFractionBelowOneUnderAStaticMemoryHigh) {
  const std::string arm = arm_x("policy: memory-high, params: {fraction: 1}");
  EXPECT_EQ(error_of(with_settings(arm, 30, "bg_memory_max_mib: 300, bg_memory_high_mib: 250")),
            "arms.yaml:19:55: field arms[1].params.fraction: must be below 1 when cgroups.bg_memory_high_mib is "
            "set (250 MiB): bg sits at that limit, and 1 x memory.current writes it back unchanged");
  EXPECT_EQ(error_of(with_settings(arm, 30)), "");
}

TEST(ArmSettings, RulesReclaimWithinTheBgLimitAndModesWithinThePressurePhase) {
  const auto rules = [](const std::string& rule) {
    return "arms:\n  - static-zram\n  - name: x\n    policy: rules\n    params:\n      rules:\n        - " + rule + "\n";
  };
  // Line 23: the rule; the error points at the part it names.
  // A reclaim's dose below the bg limit, as the study's arm's: at the limit is refused too.
  EXPECT_EQ(error_of(with_settings(rules("{when: psi_window_trigger, do: {reclaim: {mib: 300}}, mode: once}"), 30)),
            "arms.yaml:23:58: field arms[1].params.rules[0].do.reclaim.mib: 300 MiB must be "
            "below cgroups.bg_memory_max_mib (300 MiB): bg never holds more than its memory.max to reclaim");
  EXPECT_EQ(error_of(with_settings(rules("{when: psi_window_trigger, do: {reclaim: {mib: 299}}, mode: once}"), 30)), "");
  EXPECT_THAT(error_of(with_settings(rules("{when: psi_window_trigger, do: {reclaim: {bytes: 314572800}}}"), 30)),
            ::testing::HasSubstr("arms.yaml:23:60: field arms[1].params.rules[0].do.reclaim.bytes: 314572800 B must be below cgroups.bg_memory_max_mib (300 MiB = 314572800 B)"));
  EXPECT_EQ(error_of(with_settings(rules("{when: {timer: {after_s: 0}}, do: nothing, mode: {every_s: 31}}"), 30)),
            "arms.yaml:23:70: field arms[1].params.rules[0].mode.every_s: 31 s must be at most "
            "phases_s.pressure (30 s): no decision it paces would fall in the pressure phase");
  EXPECT_EQ(error_of(with_settings(rules("{when: {timer: {after_s: 0}}, do: nothing, mode: {cooldown_s: 30}}"), 30)), "");
  // A rule's own error (not the settings') points at the rule's part too, not at `rules:`.
  EXPECT_EQ(error_of(with_settings(rules("{when: psi_window_trigger, do: swapon}"), 30)),
            "arms.yaml:23:42: field arms[1].params.rules[0].do: 'swapon' is not an action (actions: "
            "memory_high, nothing, reclaim, zram_on)");
}

TEST(ArmSettings, TheStudyArmTakesTheDesignsDoseUnderItsRule) {
  // bounded-reclaim listed by name: its dose is design.dose_mib (line 18), checked by its policy's rule.
  const std::string text = test_support::small_campaign_yaml(kProvider, "repeats: 1, dose_mib: 300");
  EXPECT_EQ(error_of(text), "arms.yaml:18:56: field design.dose_mib: the study's bounded-reclaim takes this dose: dose_mib: "
                            "300 MiB must be below cgroups.bg_memory_max_mib (300 MiB): bg never holds more than its "
                            "memory.max to reclaim");
  EXPECT_EQ(error_of(test_support::small_campaign_yaml(kProvider, "repeats: 1, dose_mib: 299")), "");
}

// ---- what a new user tripped on ---------------------------------------------------------------------

TEST(ArmsNewUser, AnUnknownDesignKeyIsReportedAsThatKey) {
  EXPECT_EQ(error_of(test_support::small_campaign_yaml(kProvider, "triplets_per_regim: 15, dose_mib: 96")),
            "arms.yaml:18:34: field design.triplets_per_regim: unknown key (did you mean 'triplets_per_regime'? it is "
            "required and missing)");
  EXPECT_EQ(error_of(test_support::small_campaign_yaml(kProvider, "repeat: 2, dose_mib: 96")),
            "arms.yaml:18:34: field design.repeat: unknown key (did you mean 'repeats'? it is required and missing)");
}

TEST(ArmsNewUser, AnUnknownParameterGetsADidYouMean) {
  EXPECT_THAT(error_of(with_settings(arm_x("policy: bounded-reclaim, params: {dose_mb: 32}"), 30)),
              ::testing::EndsWith("field arms[1].params.dose_mb: 'dose_mb' is not a parameter of policy bounded-reclaim; did "
                                  "you mean 'dose_mib'? (its parameters: dose_mib)"));
  EXPECT_THAT(error_of(with_settings(arm_x("policy: senpai, params: {intervals: 3}"), 30)),
              ::testing::HasSubstr("did you mean 'interval_s'?"));
  // Nothing near: no guess.
  EXPECT_THAT(error_of(with_settings(arm_x("policy: senpai, params: {speed: 3}"), 30)),
              ::testing::EndsWith("'speed' is not a parameter of policy senpai (its parameters: interval_s, ratio, target, max_step, "
                                   "io_pressure)"));
}

// Issue 59 item 5: an unknown policy, detector or action is answered with the nearest name, as
// an unknown parameter is, and the field's path is said once.
TEST(ArmsNewUser, AnUnknownPolicyDetectorOrActionGetsADidYouMeanAndItsPathOnce) {
  EXPECT_THAT(error_of(with_settings(arm_x("policy: senpi"), 30)),
              ::testing::EndsWith("field arms[1].policy: 'senpi' is not a registered policy; did you mean 'senpai'? "
                                  "(policies: bounded-loop, bounded-reclaim, delayed-activation, memflux-guard, "
                                  "memory-high, rules, senpai, static-zram; `harness plan --list-policies`)"));
  EXPECT_THAT(error_of(with_arms("arms: [static-zram, bounded-reclam]\n", "kind: matched-blocks, repeats: 1")),
              HasSubstr("field arms[1]: 'bounded-reclam' is not one of the study's arms; did you mean 'bounded-reclaim'?"));
  const auto rules = [](const std::string& rule) {
    return "arms:\n  - static-zram\n  - name: x\n    policy: rules\n    params:\n      rules:\n        - " + rule + "\n";
  };
  // A detector typed short: a prefix of psi_window_trigger within edit distance 2.
  EXPECT_EQ(error_of(with_settings(rules("{when: psi_windw, do: nothing}"), 30)),
            "arms.yaml:23:18: field arms[1].params.rules[0].when: 'psi_windw' is not a detector; did you mean "
            "'psi_window_trigger'? (detectors: mem_available, memory_current, psi, psi_window_trigger, refaults, timer)");
  EXPECT_EQ(error_of(with_settings(rules("{when: psi_window_trigger, do: zram_onn}"), 30)),
            "arms.yaml:23:42: field arms[1].params.rules[0].do: 'zram_onn' is not an action; did you mean 'zram_on'? "
            "(actions: memory_high, nothing, reclaim, zram_on)");
  // Nothing near: the list alone, and still the path once.
  EXPECT_EQ(error_of(with_settings(rules("{when: psi_window_trigger, do: swapon}"), 30)),
            "arms.yaml:23:42: field arms[1].params.rules[0].do: 'swapon' is not an action (actions: memory_high, nothing, "
            "reclaim, zram_on)");
}

TEST(ArmsNewUser, BoundsReadAsPeopleWriteThem) {
  EXPECT_THAT(error_of(with_settings(arm_x("policy: bounded-reclaim, params: {dose_mib: 0.0001}"), 30)),
              ::testing::EndsWith("dose_mib: 0.0001 is below its minimum 1/1024 MiB"));
}

TEST(ArmsNewUser, TwoSpellingsOfOneRuleListAreOneArm) {
  const auto arm_sha = [&](const std::string& params) {
    const auto c = hc::parse_campaign(with_settings(arm_x("policy: rules, params: " + params), 30), "a.yaml");
    const auto doc = nlohmann::json::parse(hc::plan(c).json_text);
    for (const auto& a : doc.at("arms"))
      if (a.at("name") == "x") return std::make_pair(a.at("sha256").get<std::string>(), a.at("params"));
    ADD_FAILURE() << "no arm x";
    return std::make_pair(std::string(), nlohmann::json());
  };
  const auto terse = arm_sha("{zram_at_start: prepared, rules: [{when: psi_window_trigger, do: zram_on}]}");
  const auto full = arm_sha(
      "{zram_at_start: prepared, rules: [{when: {psi_window_trigger: {}}, do: {zram_on: {}}, mode: once}]}");
  const auto defaults = arm_sha("{zram_at_start: prepared, rules: [{when: {psi: {above_pct: 10}}, do: nothing}]}");
  const auto defaults_written = arm_sha(
      "{zram_at_start: prepared, rules: [{when: {psi: {kind: some, windows: 1, above_pct: 10}}, do: {nothing: null}, mode: once}]}");
  EXPECT_EQ(terse.first, full.first);
  EXPECT_EQ(terse.second.at("rules"), nlohmann::json::parse(
      R"([{"do": {"zram_on": {}}, "mode": "once", "when": {"psi_window_trigger": {}}}])"));
  EXPECT_EQ(defaults.first, defaults_written.first);
  EXPECT_NE(terse.first, defaults.first);
}
