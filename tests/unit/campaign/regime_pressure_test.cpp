// A regime that declares its own pressure (docs/CAMPAIGN.md "regimes"; harness/campaign/model/campaign.hpp
// Regime): a cold-memory regime (no bg limit, a stationary hot set) beside a regime of the
// campaign's pressure in one campaign. Each declared value reaches its regime's case specs and
// no other's, enters the plan hash, the A/B comparison settings and the pilot match only when
// declared (a campaign that declares none plans as before: the pinned hashes, pinned_numbers_test);
// every wrong value is a FILE:LINE:COL error naming the field; arms are checked against every
// regime's bg limit.
#include "harness/campaign/model/ab_settings.hpp"
#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/plan/pilot_match.hpp"
#include "harness/campaign/plan/schedule.hpp"
#include "harness/case/spec/spec.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "test_files.hpp"

namespace hc = harness::campaign;
using ::testing::HasSubstr;
using json = nlohmann::json;

namespace {

constexpr std::int64_t kRegimeMiB = 1 << 20;

/// campaigns/smoke.yaml (bg limit 300 MiB, 600 MiB allocation, 128 MiB active set) with its
/// regimes replaced by `regimes` (YAML list items, two-space indented) and its arms by `arms`.
std::string smoke_regimes(const std::string& regimes, const std::string& arms = "configurations: [static-zram, delayed-activation, bounded-reclaim]") {
  std::string text = testfiles::read(std::string(HARNESS_SOURCE_DIR) + "/campaigns/smoke.yaml");
  const std::string old_regimes = "  - {name: fast-structured, rate_mib_s: 64, contents: structured}\n";
  text.replace(text.find(old_regimes), old_regimes.size(), regimes);
  const std::string old_arms = "configurations: [static-zram, delayed-activation, bounded-reclaim]";
  text.replace(text.find(old_arms), old_arms.size(), arms);
  return text;
}

const std::string kColdRegime =
    "  - {name: fast-structured, rate_mib_s: 64, contents: structured}\n"
    "  - {name: cold, rate_mib_s: 64, contents: random, allocation_mib: 256, active_set_mib: 96,\n"
    "     active_set_slide_mib_s: 0, bg_memory_max_mib: none}\n";

std::string regime_error(const std::string& text) {
  try {
    hc::parse_campaign(text, "regimes.yaml");
  } catch (const hc::CampaignError& e) {
    return e.what();
  }
  return "(accepted)";
}

/// The spec of the first planned case of `regime`.
harness::case_::CaseSpec first_spec_of(const hc::Schedule& s, const std::string& regime) {
  for (const auto& k : s.cases)
    if (k.regime == regime) return harness::case_::parse_spec(k.spec.dump(), k.case_id);
  ADD_FAILURE() << "no case of regime " << regime;
  return {};
}

}  // namespace

TEST(RegimePressure, ACampaignMixesAColdRegimeWithOneOfTheCampaignsPressure) {
  const auto c = hc::parse_campaign(smoke_regimes(kColdRegime), "regimes.yaml");
  ASSERT_EQ(c.regimes.size(), 2u);
  const hc::Regime& calibrated = c.regimes[0];
  EXPECT_TRUE(calibrated.declared.empty());
  EXPECT_EQ(calibrated.allocation_mib, 600);
  EXPECT_EQ(calibrated.active_set_mib, 128);
  EXPECT_EQ(calibrated.bg_memory_max_mib, 300);
  EXPECT_DOUBLE_EQ(calibrated.active_set_slide_mib_s, harness::case_::kDefaultActiveSetSlideMibS);
  const hc::Regime& cold = c.regimes[1];
  EXPECT_EQ(cold.declared, (std::vector<std::string>{"allocation_mib", "active_set_mib", "active_set_slide_mib_s", "bg_memory_max_mib"}));
  EXPECT_EQ(cold.allocation_mib, 256);
  EXPECT_EQ(cold.active_set_mib, 96);
  EXPECT_EQ(cold.active_set_slide_mib_s, 0);
  EXPECT_FALSE(cold.bg_memory_max_mib);
  EXPECT_EQ(cold.line, 42);
  EXPECT_EQ(hc::declared_pressure_json(calibrated), json::object());
  EXPECT_EQ(hc::declared_pressure_json(cold),
            json({{"allocation_mib", 256}, {"active_set_mib", 96}, {"active_set_slide_mib_s", 0.0}, {"bg_memory_max_mib", nullptr}}));
  EXPECT_EQ(hc::bg_limit_field(c, calibrated), "cgroups.bg_memory_max_mib");
  EXPECT_EQ(hc::bg_limit_field(c, cold), "regimes[1].bg_memory_max_mib");

  // Each regime's cases carry its own pressure to the executor (the spec, SPEC.md).
  const auto plan = hc::plan(c);
  ASSERT_EQ(plan.cases.size(), 6u);
  const auto a = first_spec_of(plan, "fast-structured");
  EXPECT_EQ(a.cgroups.bg_memory_max_bytes, 300 * kRegimeMiB);
  EXPECT_EQ(a.pressure.allocation_bytes, 600 * kRegimeMiB);
  EXPECT_EQ(a.pressure.active_set_bytes, 128 * kRegimeMiB);
  EXPECT_DOUBLE_EQ(a.pressure.active_set_slide_mib_s, harness::case_::kDefaultActiveSetSlideMibS);
  const auto b = first_spec_of(plan, "cold");
  EXPECT_FALSE(b.cgroups.bg_memory_max_bytes);
  EXPECT_EQ(b.pressure.allocation_bytes, 256 * kRegimeMiB);
  EXPECT_EQ(b.pressure.active_set_bytes, 96 * kRegimeMiB);
  EXPECT_EQ(b.pressure.active_set_slide_mib_s, 0);
  EXPECT_EQ(b.pressure.contents, "random");
  for (const auto& k : plan.cases)
    if (k.regime == "cold") {
      EXPECT_TRUE(k.spec.at("cgroups").at("bg_memory_max_bytes").is_null()) << k.case_id;
    }
}

TEST(RegimePressure, DeclaredSettingsEnterThePlanHashAndTheComparisonSettingsOnlyWhenDeclared) {
  const std::string plain = smoke_regimes("  - {name: fast-structured, rate_mib_s: 64, contents: structured}\n");
  const auto base = hc::parse_campaign(plain, "regimes.yaml");
  // Declaring the campaign's own values changes nothing the cases run, nor the plan.
  const auto same = hc::parse_campaign(
      smoke_regimes("  - {name: fast-structured, rate_mib_s: 64, contents: structured, allocation_mib: 600}\n"), "regimes.yaml");
  EXPECT_EQ(hc::plan(same).sha256_hex, hc::plan(base).sha256_hex);
  // Any other value is another plan.
  for (const std::string& extra : {"allocation_mib: 640", "active_set_mib: 96", "active_set_slide_mib_s: 0", "bg_memory_max_mib: 280",
                                   "bg_memory_max_mib: none"}) {
    SCOPED_TRACE(extra);
    const auto other = hc::parse_campaign(
        smoke_regimes("  - {name: fast-structured, rate_mib_s: 64, contents: structured, " + extra + "}\n"), "regimes.yaml");
    EXPECT_NE(hc::plan(other).sha256_hex, hc::plan(base).sha256_hex);
  }
  // The A/B comparison settings and the pilot match: the regime's declared keys, nothing else.
  const auto cold = hc::parse_campaign(smoke_regimes(kColdRegime), "regimes.yaml");
  const json s = hc::comparison_settings(cold);
  EXPECT_EQ(s.at("regimes")[0], json({{"name", "fast-structured"}, {"rate_mib_s", 64.0}, {"contents", "structured"}}));
  EXPECT_TRUE(s.at("regimes")[1].at("bg_memory_max_mib").is_null());
  EXPECT_EQ(s.at("regimes")[1].at("allocation_mib"), 256);
  EXPECT_EQ(hc::pilot_match_settings(cold).at("regimes").at("cold").at("active_set_mib"), 96);
  EXPECT_FALSE(hc::pilot_match_settings(cold).at("regimes").at("fast-structured").contains("allocation_mib"));
}

TEST(RegimePressure, EachWrongValueIsAnErrorAtItsLine) {
  const auto at = [](const std::string& regime) {
    return regime_error(smoke_regimes("  - {name: fast-structured, rate_mib_s: 64, contents: structured}\n" + regime));
  };
  EXPECT_THAT(at("  - {name: c, rate_mib_s: 64, contents: random, bg_memory_max_mib: 1024}\n"),
              HasSubstr("regimes.yaml:42:68: field regimes[1].bg_memory_max_mib: must be > 0 and below vm.memory_mib, or none"));
  EXPECT_THAT(at("  - {name: c, rate_mib_s: 64, contents: random, bg_memory_max_mib: }\n"),
              HasSubstr("field regimes[1].bg_memory_max_mib: write `none` for a regime without a bg limit"));
  EXPECT_THAT(at("  - {name: c, rate_mib_s: 64, contents: random, bg_memory_max_mib: nothing}\n"),
              HasSubstr("field regimes[1].bg_memory_max_mib: cannot read 'nothing' as an integer"));
  EXPECT_THAT(at("  - {name: c, rate_mib_s: 64, contents: random, allocation_mib: 0}\n"),
              HasSubstr("field regimes[1].allocation_mib:"));
  EXPECT_THAT(at("  - {name: c, rate_mib_s: 64, contents: random, active_set_slide_mib_s: -1}\n"),
              HasSubstr("regimes.yaml:42:73: field regimes[1].active_set_slide_mib_s: must be in 0..100000 MiB/s"));
  EXPECT_THAT(at("  - {name: c, rate_mib_s: 64, contents: random, active_set_mib: 700}\n"),
              HasSubstr("field regimes[1].active_set_mib: 700 MiB must be <= allocation_mib (600 MiB)"));
  // With a limit, the study's rule: the allocation exceeds it (the campaign's 300 MiB, or the regime's own).
  EXPECT_THAT(at("  - {name: c, rate_mib_s: 64, contents: random, allocation_mib: 300}\n"),
              HasSubstr("regimes.yaml:42:65: field regimes[1].allocation_mib: allocation_mib 300 MiB must exceed the bg limit "
                        "(300 MiB, cgroups.bg_memory_max_mib)"));
  EXPECT_THAT(at("  - {name: c, rate_mib_s: 64, contents: random, bg_memory_max_mib: 600}\n"),
              HasSubstr("field regimes[1].bg_memory_max_mib: allocation_mib 600 MiB must exceed the bg limit (600 MiB, "
                        "regimes[1].bg_memory_max_mib)"));
  // Without one (ours): the allocation fits in the VM, and the active set leaves some of it cold.
  EXPECT_THAT(at("  - {name: c, rate_mib_s: 64, contents: random, allocation_mib: 1024, bg_memory_max_mib: none}\n"),
              HasSubstr("field regimes[1].allocation_mib: 1024 MiB must be below vm.memory_mib (1024 MiB)"));
  EXPECT_THAT(at("  - {name: c, rate_mib_s: 64, contents: random, allocation_mib: 128, bg_memory_max_mib: none}\n"),
              HasSubstr("field regimes[1].active_set_mib: 128 MiB must be below allocation_mib (128 MiB): without a bg limit"));
  EXPECT_THAT(at("  - {name: c, rate_mib_s: 64, contents: random, bg_memory_max: none}\n"),
              HasSubstr("field regimes[1].bg_memory_max: unknown key"));
}

TEST(RegimePressure, ArmsAndDosesAreCheckedAgainstEveryRegimesLimit) {
  const std::string lower = "  - {name: fast-structured, rate_mib_s: 64, contents: structured}\n"
                            "  - {name: low, rate_mib_s: 64, contents: structured, bg_memory_max_mib: 200}\n";
  // The study's dose (96 MiB) fits both; 250 MiB fits the campaign's 300 MiB, not the regime's 200.
  EXPECT_EQ(regime_error(smoke_regimes(lower)), "(accepted)");
  std::string text = smoke_regimes(lower);
  text.replace(text.find("dose_mib: 96"), 12, "dose_mib: 250");
  EXPECT_THAT(regime_error(text), HasSubstr("field design.dose_mib: the study's bounded-reclaim takes this dose: dose_mib: 250 MiB "
                                        "must be below regimes[1].bg_memory_max_mib (200 MiB)"));
  const std::string loop = "arms:\n  - static-zram\n  - {name: loop, policy: bounded-loop, params: {step_mib: 16, total_cap_mib: 250}}\n"
                           "analysis:\n  comparisons: [{canary: compute, treatment: loop, comparator: static-zram}]";
  text = smoke_regimes(lower, loop);
  text.replace(text.find("  kind: matched-triplets"), 24, "  kind: matched-blocks");
  EXPECT_THAT(regime_error(text), HasSubstr("field arms[1].params.total_cap_mib: 250 MiB must be at most "
                                        "regimes[1].bg_memory_max_mib (200 MiB)"));
  // A regime without a limit has nothing to check against: only the campaign's limit judges.
  text = smoke_regimes(kColdRegime, loop);
  text.replace(text.find("  kind: matched-triplets"), 24, "  kind: matched-blocks");
  EXPECT_EQ(regime_error(text), "(accepted)");
}
