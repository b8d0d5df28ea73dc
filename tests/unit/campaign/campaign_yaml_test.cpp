// The four campaign files load; broken copies are rejected with file:line and the field;
// plans are deterministic, complete and hashed; a tampered stored schedule is refused.
#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/store/campaign_db.hpp"
#include "harness/campaign/plan/schedule.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "test_files.hpp"

namespace hc = harness::campaign;
using testfiles::TempDir;
using testfiles::read;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

std::string campaign_path(const std::string& name) { return std::string(HARNESS_SOURCE_DIR) + "/campaigns/" + name; }

/// Replaces the first occurrence of `from` in the smoke campaign text; returns the error.
std::string error_of(const std::string& from, const std::string& to, const std::string& base = "smoke.yaml") {
  std::string text = read(campaign_path(base));
  const auto p = text.find(from);
  if (p == std::string::npos) return "TEST BUG: '" + from + "' not in " + base;
  text.replace(p, from.size(), to);
  try {
    hc::parse_campaign(text, "broken.yaml");
  } catch (const hc::CampaignError& e) {
    return e.what();
  }
  return "(accepted)";
}

/// 1-based line of the first line containing `needle` in `base`.
int line_of(const std::string& needle, const std::string& base = "smoke.yaml") {
  std::istringstream in(read(campaign_path(base)));
  std::string l;
  for (int n = 1; std::getline(in, l); ++n)
    if (l.find(needle) != std::string::npos) return n;
  return -1;
}

}  // namespace

TEST(CampaignFiles, AllFiveLoadWithTheirDesigns) {
  const auto smoke = hc::load_campaign(campaign_path("smoke.yaml"));
  EXPECT_EQ(smoke.name, "smoke");
  EXPECT_EQ(smoke.provider, "local-qemu");
  EXPECT_EQ(smoke.vms, std::vector<std::string>{"vm0"});
  EXPECT_EQ(smoke.arms.size(), 3u);
  EXPECT_EQ(hc::plan(smoke).cases.size(), 3u);

  const auto pilot = hc::load_campaign(campaign_path("pilot.yaml"));
  EXPECT_EQ(pilot.design, "pilot");
  EXPECT_EQ(pilot.pilot_doses_mib, (std::vector<std::int64_t>{16, 32, 64, 96}));
  EXPECT_EQ(pilot.warmup_s, 120);
  EXPECT_EQ(pilot.pressure_s, 300);
  EXPECT_EQ(pilot.recovery_s, 120);
  EXPECT_DOUBLE_EQ(pilot.eligibility_max_duration_s, 1.0);
  EXPECT_DOUBLE_EQ(pilot.eligibility_min_achieved_ratio, 0.8);
  EXPECT_EQ(pilot.regimes.size(), 4u);
  EXPECT_EQ(hc::plan(pilot).cases.size(), 16u);

  const auto conf = hc::load_campaign(campaign_path("confirmatory.yaml"));
  EXPECT_EQ(conf.design, "matched-triplets");
  EXPECT_EQ(conf.kind, "confirmatory");
  EXPECT_EQ(conf.dose_mib, 96);
  EXPECT_EQ(conf.triplets_per_regime, 15);
  ASSERT_NE(conf.engine, nullptr);
  EXPECT_EQ(conf.engine->kind, "local-qemu");
  EXPECT_EQ(conf.engine->settings().at("count"), 9);
  EXPECT_TRUE(conf.engine->fresh_guest_per_case);
  EXPECT_EQ(conf.vms, (std::vector<std::string>{"vm0", "vm1", "vm2", "vm3", "vm4", "vm5", "vm6", "vm7", "vm8"}));
  EXPECT_EQ(hc::plan(conf).cases.size(), 180u);

  const auto five = hc::load_campaign(campaign_path("confirmatory-5vm.yaml"));
  EXPECT_EQ(five.kind, "confirmatory");
  EXPECT_EQ(five.vms.size(), 5u);
  EXPECT_EQ(five.repeats, 3);
  EXPECT_EQ(five.triplets_per_regime, 0);
  EXPECT_EQ(hc::plan(five).cases.size(), 180u);
  EXPECT_EQ(smoke.kind, "smoke");
  EXPECT_EQ(pilot.kind, "pilot");
  EXPECT_EQ(pilot.pinned_commit, "build");  // resolved to the planning build by the CLI (resolve_build_pin)

  const auto ci = hc::load_campaign(campaign_path("ci-regression.yaml"));
  EXPECT_EQ(ci.kind, "ci");
  EXPECT_FALSE(ci.assertions.empty());
  EXPECT_EQ(ci.design, "ab-pairs");  // 6 pairs of bounded-reclaim cases: the CI budget (docs/CI.md "Budgets")
  ASSERT_EQ(ci.variants.size(), 2u);
  EXPECT_EQ(ci.tolerances.size(), 10u);
  EXPECT_EQ(hc::plan(ci).cases.size(), 12u);
}

TEST(CampaignFiles, DefaultsMakePressureRealOnA1GiBVm) {
  for (const char* f : {"smoke.yaml", "pilot.yaml", "confirmatory.yaml", "confirmatory-5vm.yaml", "ci-regression.yaml"}) {
    const auto c = hc::load_campaign(campaign_path(f));
    SCOPED_TRACE(f);
    EXPECT_EQ(c.memory_mib, 1024);
    EXPECT_EQ(c.vcpus, 1);
    EXPECT_GT(c.allocation_mib, c.bg_memory_max_mib);  // study: allocation > bg limit
    EXPECT_LE(c.active_set_mib, c.bg_memory_max_mib);
    EXPECT_EQ(c.trigger_window_ms, 1000);                 // study predicate
    EXPECT_EQ(c.trigger_min_increase_us, 1000);
    EXPECT_EQ(c.trigger_consecutive_windows, 3);
    EXPECT_EQ(c.canary_period_ms, 100);
    EXPECT_GT(c.zram_priority, c.swapfile_priority);
  }
}

TEST(CampaignPlan, FiveVmAlternativeHas60MatchedTripletsOver20EqualStrata) {
  const auto c = hc::load_campaign(campaign_path("confirmatory-5vm.yaml"));
  const auto s = hc::plan(c);
  std::map<std::string, std::set<std::string>> triplets;
  std::map<std::pair<std::string, std::string>, std::set<std::string>> strata;
  for (const auto& k : s.cases) {
    ASSERT_TRUE(k.triplet_id);
    triplets[*k.triplet_id].insert(k.configuration);
    strata[{k.vm, k.regime}].insert(*k.triplet_id);
    EXPECT_EQ(k.spec.at("case_id"), k.case_id);
    EXPECT_EQ(k.spec.at("pressure").at("allocation_bytes"), 320LL << 20);
    if (k.configuration == "bounded-reclaim") EXPECT_EQ(k.spec.at("dose_bytes"), 96LL << 20);
    else EXPECT_FALSE(k.spec.contains("dose_bytes"));
  }
  EXPECT_EQ(triplets.size(), 60u);
  for (const auto& [t, confs] : triplets) EXPECT_EQ(confs.size(), 3u) << t;
  EXPECT_EQ(strata.size(), 20u);
  for (const auto& [k, ts] : strata) EXPECT_EQ(ts.size(), 3u);
}

TEST(CampaignPlan, SeededOrderIsReproducibleAndRandomized) {
  const auto c = hc::load_campaign(campaign_path("confirmatory.yaml"));
  const auto a = hc::plan(c), b = hc::plan(c);
  EXPECT_EQ(a.sha256_hex, b.sha256_hex);
  ASSERT_EQ(a.sha256_hex.size(), 64u);
  auto c2 = c;
  c2.seed += 1;
  const auto d = hc::plan(c2);
  EXPECT_NE(a.sha256_hex, d.sha256_hex);
  // Configuration order within triplets is not always the canonical one, and cases of
  // one triplet are contiguous on their VM.
  int canonical = 0, triplets = 0;
  std::map<std::string, std::vector<const hc::ScheduledCase*>> per_vm;
  for (const auto& k : a.cases) per_vm[k.vm].push_back(&k);
  for (const auto& [vm, v] : per_vm) {
    ASSERT_EQ(v.size() % 3, 0u);
    for (std::size_t i = 0; i < v.size(); i += 3) {
      EXPECT_EQ(v[i]->triplet_id, v[i + 1]->triplet_id);
      EXPECT_EQ(v[i]->triplet_id, v[i + 2]->triplet_id);
      ++triplets;
      if (v[i]->configuration == "static-zram" && v[i + 1]->configuration == "delayed-activation") ++canonical;
    }
  }
  EXPECT_EQ(triplets, 60);
  EXPECT_LT(canonical, 30);  // 1/6 expected (~10); all 60 canonical would mean no shuffle
  // Matched: the three cases of a triplet share the workload seed.
  std::map<std::string, std::set<std::uint64_t>> seeds;
  for (const auto& k : a.cases) seeds[*k.triplet_id].insert(k.spec["pressure"]["seed"].get<std::uint64_t>());
  for (const auto& [t, s] : seeds) EXPECT_EQ(s.size(), 1u) << t;
}

TEST(CampaignPlan, ScheduleJsonRoundTrips) {
  const auto s = hc::plan(hc::load_campaign(campaign_path("pilot.yaml")));
  const auto r = hc::schedule_from_json(s.json_text);
  EXPECT_EQ(r.sha256_hex, s.sha256_hex);
  ASSERT_EQ(r.cases.size(), s.cases.size());
  for (std::size_t i = 0; i < r.cases.size(); ++i) {
    EXPECT_EQ(r.cases[i].case_id, s.cases[i].case_id);
    EXPECT_EQ(r.cases[i].dose_bytes, s.cases[i].dose_bytes);
  }
}

TEST(CampaignErrors, BrokenCopyRejectedWithFileLineAndField) {
  const int l = line_of("bg_memory_max_mib: 300");
  EXPECT_THAT(error_of("bg_memory_max_mib: 300", "bg_memory_max_mib: lots"),
              HasSubstr("broken.yaml:" + std::to_string(l) + ":"));
  EXPECT_THAT(error_of("bg_memory_max_mib: 300", "bg_memory_max_mib: lots"),
              HasSubstr("field cgroups.bg_memory_max_mib: cannot read 'lots' as an integer"));
}

// The parent cgroup is a new one the harness creates, never one of the VM's own (the
// executor kills every process in its parent): refused at load, naming file, line, field.
TEST(CampaignErrors, ParentCgroupMustBeHarnessOwned) {
  const int l = line_of("parent: harness");
  for (const char* p : {"system.slice", "user.slice", "init.scope"}) {
    const auto e = error_of("parent: harness", std::string("parent: ") + p);
    EXPECT_THAT(e, HasSubstr("broken.yaml:" + std::to_string(l) + ":"));
    EXPECT_THAT(e, HasSubstr(std::string("field cgroups.parent: '") + p + "' must be 'harness' or 'harness-<suffix>'"));
  }
}

TEST(CampaignErrors, UnknownKeyRejected) {
  const int l = line_of("allocation_mib: 600");
  const auto e = error_of("allocation_mib: 600", "allocation_mib: 600\n  alocation_rate: 5");
  EXPECT_THAT(e, HasSubstr("broken.yaml:" + std::to_string(l + 1) + ":"));
  EXPECT_THAT(e, HasSubstr("field pressure.alocation_rate: unknown key"));
}

TEST(CampaignErrors, DuplicateKeyNamesBothPlaces) {
  const int l = line_of("bg_memory_max_mib: 300");
  const auto e = error_of("  bg_memory_max_mib: 300\n", "  bg_memory_max_mib: 300\n  bg_memory_max_mib: 250\n");
  EXPECT_EQ(e, "broken.yaml:" + std::to_string(l + 1) +
                   ":3: field cgroups.bg_memory_max_mib: duplicate key (first given at broken.yaml:" +
                   std::to_string(l) + ":3)");
  // Also inside flow mappings and list items.
  EXPECT_THAT(error_of("{name: fast-structured, rate_mib_s: 64,", "{name: fast-structured, rate_mib_s: 64, rate_mib_s: 8,"),
              HasSubstr("field regimes[0].rate_mib_s: duplicate key (first given at broken.yaml:"));
}

TEST(CampaignErrors, LeadingZeroIntegerIsAnErrorNotOctal) {
  const int l = line_of("bg_memory_max_mib: 300");
  const auto e = error_of("bg_memory_max_mib: 300", "bg_memory_max_mib: 0300");
  EXPECT_EQ(e, "broken.yaml:" + std::to_string(l) +
                   ":22: field cgroups.bg_memory_max_mib: '0300' has a leading zero (YAML 1.1 would read it as "
                   "octal); write it without");
  EXPECT_THAT(error_of("rate_mib_s: 64", "rate_mib_s: 064"), HasSubstr("field regimes[0].rate_mib_s: '064' has a leading zero"));
  // A plain zero and a decimal below one are fine.
  EXPECT_THAT(error_of("priority: 10}", "priority: 0}"), Not(HasSubstr("leading zero")));
}

TEST(CampaignErrors, UnknownKeySuggestsTheClosestKnownKey) {
  const int l = line_of("active_set_mib: 128");
  const auto e = error_of("active_set_mib: 128", "active_set_mib: 128\n  activ_set_mib: 64");
  EXPECT_EQ(e, "broken.yaml:" + std::to_string(l + 1) +
                   ":3: field pressure.activ_set_mib: unknown key (did you mean 'active_set_mib'?)");
}

TEST(CampaignErrors, TypoOfARequiredKeyNamesTheTypoLine) {
  const int l = line_of("bg_memory_max_mib: 300");
  const auto e = error_of("bg_memory_max_mib: 300", "bg_memory_max_mb: 300");
  EXPECT_EQ(e, "broken.yaml:" + std::to_string(l) +
                   ":3: field cgroups.bg_memory_max_mb: unknown key (did you mean 'bg_memory_max_mib'? it is "
                   "required and missing)");
}

TEST(CampaignErrors, AcceleratorIsOneOfAutoKvmTcg) {
  EXPECT_THAT(error_of("fresh_guest_per_case: true", "fresh_guest_per_case: true\n  accelerator: hvf"),
              HasSubstr("field provider.accelerator: 'hvf' is not one of auto, kvm, tcg"));
  EXPECT_EQ(error_of("fresh_guest_per_case: true", "fresh_guest_per_case: true\n  accelerator: tcg"), "(accepted)");
}

TEST(CampaignErrors, RulesOfTheStudyAndSpecEnforced) {
  EXPECT_THAT(error_of("allocation_mib: 600", "allocation_mib: 200"),
              HasSubstr("field pressure.allocation_mib: must exceed cgroups.bg_memory_max_mib"));
  EXPECT_THAT(error_of("contents: structured", "contents: zeros"),
              HasSubstr("field regimes[0].contents: 'zeros' is not one of structured, random"));
  EXPECT_THAT(error_of("algorithm: lzo-rle", "algorithm: snappy"), HasSubstr("field backend.zram.algorithm"));
  EXPECT_THAT(error_of("dose_mib: 96", "dose_mib: 400"), HasSubstr("field design.dose_mib: the study's bounded-reclaim takes this dose: dose_mib: 400 MiB must be below cgroups.bg_memory_max_mib"));
  EXPECT_THAT(error_of("warmup: 10", "warmup: 0"), HasSubstr("field phases_s.warmup: must be > 0"));
  EXPECT_THAT(error_of("  - {name: fast-structured, rate_mib_s: 64, contents: structured}\n", ""),
              HasSubstr("field regimes: expected a non-empty list"));
  EXPECT_THAT(error_of("kind: local-qemu", "kind: cloud"), HasSubstr("field provider.kind: 'cloud' is not one of"));
  EXPECT_THAT(error_of("seed: 1\n", ""), HasSubstr("field seed: missing (required)"));
  EXPECT_THAT(error_of("{kind: trigger_within_s, max: 25}", "{kind: trigger_within_s}", "ci-regression.yaml"),
              HasSubstr("field assertions[2].max: missing (required)"));
  EXPECT_THAT(error_of("phases_s: {", "phases_s: [", "smoke.yaml"), HasSubstr("broken.yaml:"));
}

TEST(CampaignDb, PlanStoredAndTamperedScheduleRefused) {
  TempDir dir;
  const auto c = hc::load_campaign(campaign_path("smoke.yaml"));
  const auto s = hc::plan(c);
  {
    results::Db db(dir / "c.db", results::Db::Mode::Create);
    hc::store_plan(db, c, s);
    hc::store_plan(db, c, s);  // same plan again: no-op
    EXPECT_EQ(hc::load_verified_plan(db).sha256_hex, s.sha256_hex);
    auto other = c;
    other.seed = 99;
    EXPECT_THROW(hc::store_plan(db, other, hc::plan(other)), hc::ScheduleTampered);
    // Tamper with one schedule row: move the first case to another regime.
    db.exec("UPDATE schedule SET regime = 'slow-random' WHERE ordinal = 0");
    try {
      hc::load_verified_plan(db);
      ADD_FAILURE() << "tampered schedule row accepted";
    } catch (const hc::ScheduleTampered& e) {
      EXPECT_THAT(e.what(), HasSubstr("differs from the preregistered plan"));
    }
  }
  {
    results::Db db(dir / "d.db", results::Db::Mode::Create);
    hc::store_plan(db, c, s);
    // Tamper with the stored schedule JSON itself (dose changed): hash mismatch.
    results::Stmt u(db, "UPDATE campaign_meta SET value = replace(value, '100663296', '33554432') WHERE key = 'schedule_json'");
    u.run();
    try {
      hc::load_verified_plan(db);
      ADD_FAILURE() << "tampered schedule JSON accepted";
    } catch (const hc::ScheduleTampered& e) {
      EXPECT_THAT(e.what(), HasSubstr("schedule changed after planning"));
    }
  }
}

TEST(CampaignErrors, RepeatsAndTriplesPerRegimeAreMutuallyExclusive) {
  const int l = line_of("triplets_per_regime: 15", "confirmatory.yaml");
  const auto both = error_of("triplets_per_regime: 15", "triplets_per_regime: 15\n  repeats: 2", "confirmatory.yaml");
  EXPECT_THAT(both, HasSubstr("broken.yaml:" + std::to_string(l) + ":"));
  EXPECT_THAT(both, HasSubstr("field design.triplets_per_regime: give either triplets_per_regime (spread over "
                              "design.vms, the study's design) or repeats (per (vm, regime) stratum), not both"));
  EXPECT_THAT(error_of("triplets_per_regime: 15", "", "confirmatory.yaml"),
              HasSubstr("field design.triplets_per_regime: missing (required): give triplets_per_regime"));
  EXPECT_THAT(error_of("triplets_per_regime: 15", "triplets_per_regime: 0", "confirmatory.yaml"),
              HasSubstr("field design.triplets_per_regime: must be > 0"));
}

TEST(CampaignErrors, LocalQemuCountMustEqualTheDesignVms) {
  const int l = line_of("vms: [vm0, vm1", "confirmatory.yaml");
  const auto e = error_of("count: 9", "count: 5", "confirmatory.yaml");
  EXPECT_THAT(e, HasSubstr("broken.yaml:" + std::to_string(l) + ":"));
  EXPECT_THAT(e, HasSubstr("field design.vms: lists 9 VMs but provider.count is 5"));
  EXPECT_THAT(error_of("vm7, vm8]", "vm7, vmX]", "confirmatory.yaml"),
              HasSubstr("field design.vms[8]: 'vmX' is not a VM of the provider (local-qemu names them vm0..vm8)"));
  EXPECT_THAT(error_of("vm7, vm8]", "vm7, vm7]", "confirmatory.yaml"),
              HasSubstr("field design.vms[8]: duplicate VM 'vm7'"));
}

TEST(CampaignErrors, PinnedCommitAnyOnlyForSmokeAndCi) {
  const int l = line_of("pinned_commit: build", "pilot.yaml");
  std::string text = read(campaign_path("pilot.yaml"));
  const auto at = text.find("pinned_commit: build");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, std::string("pinned_commit: build").size(), "pinned_commit: any");
  try {
    hc::parse_campaign(text, "pilot-any.yaml");
    ADD_FAILURE() << "a pilot campaign with pinned_commit: any was accepted";
  } catch (const hc::CampaignError& e) {
    EXPECT_THAT(e.what(), HasSubstr("pilot-any.yaml:" + std::to_string(l) + ":16: field pinned_commit: 'any' is "
                                    "accepted only for kind smoke or ci; this campaign is pilot"));
  }
  // Without `kind`, a campaign is confirmatory (pilot for design.kind pilot): the pin is required.
  EXPECT_THAT(error_of("kind: smoke ", "#kind: smoke "),
              HasSubstr("field pinned_commit: 'any' is accepted only for kind smoke or ci; this campaign is "
                        "confirmatory (kind not given: confirmatory by default)"));
  EXPECT_THAT(error_of("kind: smoke ", "kind: nightly "), HasSubstr("field kind: 'nightly' is not one of smoke, ci, pilot, confirmatory"));
  EXPECT_THAT(error_of("\npinned_commit: any", "\npinned_commit: 3b02de5"),
              HasSubstr("field pinned_commit: '3b02de5' does not match [0-9a-f]{40}"));
}

TEST(CampaignErrors, DoseFromPilotNeedsAPath) {
  EXPECT_THAT(error_of("dose_mib: 96\n", "dose_mib: {from_pilot: ''}\n", "confirmatory.yaml"),
              HasSubstr("field design.dose_mib.from_pilot: must name the pilot DB"));
  EXPECT_THAT(error_of("dose_mib: 96\n", "dose_mib: {from_pilots: x.db}\n", "confirmatory.yaml"),
              HasSubstr("field design.dose_mib.from_pilots: unknown key (did you mean 'from_pilot'? it is required "
                        "and missing)"));
}

TEST(CampaignPin, BuildMeansTheCleanBuildThatPlansIt) {
  auto c = hc::load_campaign(campaign_path("confirmatory.yaml"));
  ASSERT_EQ(c.pinned_commit, "build");  // the repository's study campaigns pin the planning build
  const std::string commit(40, 'a');
  auto dirty = c;
  try {
    hc::resolve_build_pin(dirty, commit, true);
    FAIL() << "a dirty build was accepted";
  } catch (const hc::CampaignError& e) {
    EXPECT_THAT(e.what(), HasSubstr("field pinned_commit: 'build' needs a clean build"));
  }
  auto preview = c;  // `harness plan FILE` without a DB: printed, never stored
  hc::resolve_build_pin(preview, commit, true, /*preview=*/true);
  EXPECT_EQ(preview.pinned_commit, commit);
  auto unknown = c;
  EXPECT_THROW(hc::resolve_build_pin(unknown, "unknown", false), hc::CampaignError);
  auto unknown_preview = c;  // a preview still needs a build from a git checkout
  EXPECT_THROW(hc::resolve_build_pin(unknown_preview, "unknown", false, true), hc::CampaignError);
  hc::resolve_build_pin(c, commit, false);
  EXPECT_EQ(c.pinned_commit, commit);
  EXPECT_EQ(hc::plan(c).cases.front().spec["pinned_commit"], commit);  // the pin is in the preregistered plan
  auto smoke = hc::load_campaign(campaign_path("smoke.yaml"));
  hc::resolve_build_pin(smoke, commit, true);  // `any` is left alone, even from a dirty build
  EXPECT_EQ(smoke.pinned_commit, "any");
}

// No unquoted input in printed commands: host paths in the campaign are restricted to
// [A-Za-z0-9._/-] and absolute; the error names the file, line and field.
TEST(CampaignYaml, HostPathsMustBeSafeAndTheErrorNamesFileLineField) {
  const int swap_line = line_of("swapfile: {path: /var/lib/harness/swapfile");
  ASSERT_GT(swap_line, 0);
  auto e = error_of("path: /var/lib/harness/swapfile", "path: '/var/lib/harness/swapfile; rm -rf /'");
  EXPECT_THAT(e, HasSubstr("broken.yaml:" + std::to_string(swap_line) + ":"));
  EXPECT_THAT(e, HasSubstr("field backend.swapfile.path"));
  EXPECT_THAT(e, HasSubstr("contains ';' at offset 25"));
  e = error_of("path: /var/lib/harness/swapfile", "path: var/lib/harness/swapfile");
  EXPECT_THAT(e, HasSubstr("must be an absolute path"));
  const int db_line = line_of("sqlite_db_path: /var/lib/harness/canary.db");
  ASSERT_GT(db_line, 0);
  e = error_of("sqlite_db_path: /var/lib/harness/canary.db", "sqlite_db_path: \"/var/lib/harness/canary db\"");
  EXPECT_THAT(e, HasSubstr("broken.yaml:" + std::to_string(db_line) + ":"));
  EXPECT_THAT(e, HasSubstr("field canaries.sqlite_db_path"));
  EXPECT_THAT(e, HasSubstr("contains byte 0x20"));
  EXPECT_EQ(error_of("sqlite_db_path: /var/lib/harness/canary.db", "sqlite_db_path: /srv/h_2/canary-v1.db"),
            "(accepted)");
}

// backend.delayed_swapfile (ours; campaigns/README.md Table 1): active (default, absent from
// the spec so plans keep their hash) or off (in every case spec); anything else is an error
// at its FILE:LINE:COL.
TEST(CampaignFiles, DelayedSwapfileIsActiveByDefaultAndOffWhenSet) {
  const std::string text = read(campaign_path("smoke.yaml"));
  const auto dflt = hc::parse_campaign(text, "smoke.yaml");
  EXPECT_EQ(dflt.delayed_swapfile, harness::case_::DelayedSwapfile::Active);
  const auto p0 = hc::plan(dflt);
  for (const auto& c : p0.cases) EXPECT_FALSE(c.spec["backend"].contains("delayed_swapfile")) << c.case_id;

  std::string with = text;
  const std::string anchor = "  swapfile: {path: /var/lib/harness/swapfile, priority: 10}\n";
  ASSERT_NE(with.find(anchor), std::string::npos);
  auto explicit_active = with;
  explicit_active.replace(explicit_active.find(anchor), anchor.size(), anchor + "  delayed_swapfile: active\n");
  EXPECT_EQ(hc::plan(hc::parse_campaign(explicit_active, "a.yaml")).sha256_hex, p0.sha256_hex);

  with.replace(with.find(anchor), anchor.size(), anchor + "  delayed_swapfile: off\n");
  const auto off = hc::parse_campaign(with, "off.yaml");
  EXPECT_EQ(off.delayed_swapfile, harness::case_::DelayedSwapfile::Off);
  const auto p1 = hc::plan(off);
  EXPECT_NE(p1.sha256_hex, p0.sha256_hex);
  for (const auto& c : p1.cases) EXPECT_EQ(c.spec["backend"]["delayed_swapfile"], "off") << c.case_id;
}

TEST(CampaignErrors, DelayedSwapfileOutsideActiveOffNamesItsPlace) {
  const int l = line_of("swapfile: {path");
  const auto e = error_of("  swapfile: {path: /var/lib/harness/swapfile, priority: 10}\n",
                          "  swapfile: {path: /var/lib/harness/swapfile, priority: 10}\n  delayed_swapfile: disk\n");
  EXPECT_THAT(e, HasSubstr("broken.yaml:" + std::to_string(l + 1) + ":"));
  EXPECT_THAT(e, HasSubstr("field backend.delayed_swapfile: 'disk' is not one of active, off"));
}

// eligibility.restoration / eligibility.eagain (the pilot rule's reading, analysis/data/pilot_reading.hpp):
// absent or given as the default, the plan JSON and hash are those of a campaign without the
// keys; another reading enters the plan's `eligibility`; an unknown name is an error at its place.
TEST(CampaignFiles, PilotReadingDefaultKeepsThePlanAndAnotherEntersIt) {
  std::string text = read(campaign_path("smoke.yaml"));
  const std::string anchor = "eligibility:\n";
  ASSERT_EQ(text.find(anchor), std::string::npos) << "smoke.yaml has an eligibility section now: adapt the test";
  const auto base = hc::parse_campaign(text, "smoke.yaml");
  EXPECT_TRUE(base.eligibility_reading.is_default());
  const auto p0 = hc::plan(base);
  const auto j0 = nlohmann::json::parse(p0.json_text);
  EXPECT_EQ(j0["eligibility"], (nlohmann::json{{"max_duration_s", 1.0}, {"min_achieved_ratio", 0.8}}));

  const auto explicit_default =
      hc::parse_campaign(text + "eligibility:\n  restoration: clean\n  eagain: interface-error\n", "d.yaml");
  EXPECT_EQ(hc::plan(explicit_default).json_text, p0.json_text);

  const auto other = hc::parse_campaign(text + "eligibility:\n  eagain: partial-reclaim\n", "o.yaml");
  EXPECT_EQ(other.eligibility_reading.eagain, analysis::PilotReading::Eagain::PartialReclaim);
  EXPECT_EQ(other.eligibility_reading.restoration, analysis::PilotReading::Restoration::Clean);
  const auto p1 = hc::plan(other);
  EXPECT_NE(p1.sha256_hex, p0.sha256_hex);
  const auto j1 = nlohmann::json::parse(p1.json_text);
  EXPECT_EQ(j1["eligibility"]["eagain"], "partial-reclaim");
  EXPECT_EQ(j1["eligibility"]["restoration"], "clean");

  const int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  try {
    hc::parse_campaign(text + "eligibility:\n  restoration: tidy\n", "bad.yaml");
    ADD_FAILURE() << "accepted restoration: tidy";
  } catch (const hc::CampaignError& e) {
    EXPECT_THAT(e.what(), HasSubstr("bad.yaml:" + std::to_string(lines + 2) + ":"));
    EXPECT_THAT(e.what(), HasSubstr("field eligibility.restoration: 'tidy' is not one of clean, case-teardown"));
  }
}

// The analysis refuses a B its 1 - alpha/m intervals cannot use (analysis/tables/verdict.hpp
// minimum_replicates): the campaign is refused at plan, not after its cases ran (new-user finding).
TEST(CampaignErrors, BootstrapReplicatesBelowWhatTheIntervalsNeedIsRefused) {
  const int l = line_of("bootstrap_replicates: 10000", "confirmatory.yaml");
  const auto e = error_of("bootstrap_replicates: 10000", "bootstrap_replicates: 1000", "confirmatory.yaml");
  EXPECT_THAT(e, HasSubstr("broken.yaml:" + std::to_string(l) + ":"));
  EXPECT_THAT(e, HasSubstr("field analysis.bootstrap_replicates: 1000 is too small for 4 comparisons at alpha 0.05"));
  EXPECT_THAT(e, HasSubstr("at least 1600"));
  EXPECT_EQ(error_of("bootstrap_replicates: 10000", "bootstrap_replicates: 1600", "confirmatory.yaml"), "(accepted)");
}

// One error of each section reader the other tests leave out (campaign_yaml_sections.hpp),
// each naming its field and place, and the first section in the file's reading order wins
// when two are broken.
TEST(CampaignErrors, EverySectionReaderNamesItsField) {
  struct Case {
    const char *from, *to, *base, *expected;
  };
  const Case cases[] = {
      {"kind: smoke", "kind: nightly", "smoke.yaml", "field kind: 'nightly' is not one of smoke, ci, pilot, confirmatory"},
      {"memory_mib: 1024", "memory_mib: 256", "smoke.yaml", "field cgroups.bg_memory_max_mib: must be below vm.memory_mib"},
      {"priority: 10}", "priority: 100}", "smoke.yaml",
       "field backend.swapfile.priority: must be below zram.priority (the swapfile is the low-priority spill device"},
      {"active_set_mib: 128", "active_set_mib: 700", "smoke.yaml", "field pressure.active_set_mib: must be <= allocation_mib"},
      {"  - {name: fast-structured, rate_mib_s: 64, contents: structured}\n",
       "  - {name: fast-structured, rate_mib_s: 64, contents: structured}\n"
       "  - {name: fast-structured, rate_mib_s: 8, contents: random}\n",
       "smoke.yaml", "field regimes[1].name: duplicate regime 'fast-structured'"},
      {"kind: matched-triplets", "kind: crossover", "smoke.yaml",
       "field design.kind: 'crossover' is not one of matched-triplets, matched-blocks, pilot, ab-pairs"},
      {"max_infra_retries: 1", "max_infra_retries: -1", "smoke.yaml", "field runner.max_infra_retries: must be >= 0"},
      {"doses_mib: [16, 32, 64, 96]", "doses_mib: [16, 32, 16]", "pilot.yaml", "field design.doses_mib[2]: duplicate dose"},
      {"doses_mib: [16, 32, 64, 96]", "doses_mib: [16, 900]", "pilot.yaml",
       "field design.doses_mib[1]: must be > 0 and below cgroups.bg_memory_max_mib"},
      {"{kind: trigger_within_s, max: 25}", "{kind: within_s, max: 25}", "ci-regression.yaml",
       "field assertions[2].kind: 'within_s' is not one of all_cases_completed, reclaim_achieved_ratio, "
       "reclaim_duration_s, trigger_within_s, restoration_clean, no_foreground_oom, canary_p99_ms"},
  };
  for (const auto& c : cases) {
    const auto e = error_of(c.from, c.to, c.base);
    EXPECT_THAT(e, HasSubstr(c.expected)) << c.from << " -> " << c.to;
    EXPECT_THAT(e, ::testing::MatchesRegex("broken\\.yaml:[0-9]+:[0-9]+: field .*")) << e;
  }
  // Two broken sections: the one read first (trigger before design) is the one reported.
  std::string text = read(campaign_path("smoke.yaml"));
  text.replace(text.find("window_ms: 1000"), 15, "window_ms: 0");
  text.replace(text.find("kind: matched-triplets"), 22, "kind: crossover");
  try {
    hc::parse_campaign(text, "broken.yaml");
    ADD_FAILURE() << "accepted";
  } catch (const hc::CampaignError& e) {
    EXPECT_THAT(e.what(), HasSubstr("field trigger.window_ms: must be > 0"));
  }
}
