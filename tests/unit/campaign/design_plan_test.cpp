// The study's design as written in campaigns/confirmatory.yaml: vm0..vm8, 15 triplets per
// regime spread by the seeded balanced allocation (allocation.hpp); `harness plan` prints
// the stratum table and says when it stored nothing.
#include "analysis/simulate/coverage_sim.hpp"
#include "harness/campaign/plan/allocation.hpp"
#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/model/campaign_arms.hpp"
#include "harness/campaign/plan/coverage_family.hpp"
#include "harness/campaign/plan/schedule.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_files.hpp"

#include <sched.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <cstdio>
#include <map>
#include <memory>
#include <set>

namespace hc = harness::campaign;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

std::string confirmatory() { return std::string(HARNESS_SOURCE_DIR) + "/campaigns/confirmatory.yaml"; }

/// campaigns/ci-regression.yaml with its A/A `candidate: {}` replaced by `candidate` (YAML text
/// starting at "candidate:"), written to `path`; returns `path`. Fails the test when the file
/// no longer ships an A/A candidate.
std::string ci_regression_with(const std::string& path, const std::string& candidate) {
  std::string text = testfiles::read(std::string(HARNESS_SOURCE_DIR) + "/campaigns/ci-regression.yaml");
  const std::string from = "  candidate: {}";
  EXPECT_NE(text.find(from), std::string::npos) << "ci-regression.yaml no longer ships an A/A candidate";
  if (text.find(from) != std::string::npos) text.replace(text.find(from), from.size(), "  " + candidate);
  testfiles::write(path, text);
  return path;
}

/// Triplets per (vm, regime) counted from the planned cases (distinct triplet ids).
hc::StratumSizes counted(const hc::Schedule& s) {
  std::map<std::pair<std::string, std::string>, std::set<std::string>> t;
  for (const auto& k : s.cases) t[{k.vm, k.regime}].insert(*k.triplet_id);
  hc::StratumSizes out;
  for (const auto& [key, ids] : t) out[key.first][key.second] = static_cast<int>(ids.size());
  return out;
}

std::string run(const std::string& cmd) {
  std::string out;
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.c_str(), "r"), pclose);
  std::array<char, 4096> buf{};
  while (p && fgets(buf.data(), buf.size(), p.get())) out += buf.data();
  return out;
}

}  // namespace

TEST(DesignPlan, ConfirmatoryPlans180CasesOverNineVmsWith15TripletsPerRegime) {
  const auto c = hc::load_campaign(confirmatory());
  const auto s = hc::plan(c);
  ASSERT_EQ(s.cases.size(), 180u);
  const std::vector<std::string> vms{"vm0", "vm1", "vm2", "vm3", "vm4", "vm5", "vm6", "vm7", "vm8"};
  const std::vector<std::string> regimes{"slow-structured", "slow-random", "fast-structured", "fast-random"};
  // The planned cases realise the allocation exactly: 3 cases per triplet, 36 strata.
  EXPECT_EQ(counted(s), s.strata);
  std::map<std::string, int> configs;
  for (const auto& k : s.cases) ++configs[k.configuration];
  EXPECT_EQ(configs, (std::map<std::string, int>{{"bounded-reclaim", 60}, {"delayed-activation", 60}, {"static-zram", 60}}));
  // Each regime: 15 triplets, six VMs with 2 and three with 1.
  for (const auto& g : regimes) {
    int twos = 0, ones = 0, total = 0;
    for (const auto& vm : vms) {
      const int n = s.strata.at(vm).at(g);
      total += n;
      twos += n == 2;
      ones += n == 1;
    }
    EXPECT_EQ(total, 15) << g;
    EXPECT_EQ(twos, 6) << g;
    EXPECT_EQ(ones, 3) << g;
  }
  // Each VM: 6 or 7 triplets in all (six VMs with 7, three with 6).
  std::map<int, int> totals;
  for (const auto& vm : vms) {
    int t = 0;
    for (const auto& g : regimes) t += s.strata.at(vm).at(g);
    ++totals[t];
  }
  EXPECT_EQ(totals, (std::map<int, int>{{6, 3}, {7, 6}}));
}

TEST(DesignPlan, AllocationIsDeterministicForASeedAndSeeded) {
  const auto c = hc::load_campaign(confirmatory());
  const auto a = hc::plan(c), b = hc::plan(c);
  EXPECT_EQ(a.strata, b.strata);
  EXPECT_EQ(a.sha256_hex, b.sha256_hex);
  // Seed 772 (confirmatory.yaml): the exact table, so a change of the rule shows up here.
  const hc::StratumSizes golden{
      {"vm0", {{"slow-structured", 2}, {"slow-random", 1}, {"fast-structured", 2}, {"fast-random", 2}}},
      {"vm1", {{"slow-structured", 2}, {"slow-random", 2}, {"fast-structured", 1}, {"fast-random", 2}}},
      {"vm2", {{"slow-structured", 1}, {"slow-random", 2}, {"fast-structured", 2}, {"fast-random", 1}}},
      {"vm3", {{"slow-structured", 2}, {"slow-random", 1}, {"fast-structured", 2}, {"fast-random", 2}}},
      {"vm4", {{"slow-structured", 2}, {"slow-random", 1}, {"fast-structured", 2}, {"fast-random", 2}}},
      {"vm5", {{"slow-structured", 2}, {"slow-random", 2}, {"fast-structured", 1}, {"fast-random", 2}}},
      {"vm6", {{"slow-structured", 2}, {"slow-random", 2}, {"fast-structured", 1}, {"fast-random", 2}}},
      {"vm7", {{"slow-structured", 1}, {"slow-random", 2}, {"fast-structured", 2}, {"fast-random", 1}}},
      {"vm8", {{"slow-structured", 1}, {"slow-random", 2}, {"fast-structured", 2}, {"fast-random", 1}}},
  };
  EXPECT_EQ(a.strata, golden);
  // Another seed picks other VMs for the extra triplets.
  const std::vector<std::string> regimes{"slow-structured", "slow-random", "fast-structured", "fast-random"};
  EXPECT_NE(hc::balanced_allocation(773, c.vms, regimes, 15), a.strata);
  EXPECT_EQ(hc::balanced_allocation(772, c.vms, regimes, 15), a.strata);
}

TEST(DesignPlan, AllocationRuleOnSmallCases) {
  // 4 triplets of 2 regimes over 3 VMs: per regime 2/1/1; per VM totals 3, 3, 2.
  const auto s = hc::balanced_allocation(1, {"a", "b", "c"}, {"r1", "r2"}, 4);
  std::map<int, int> totals;
  for (const auto& vm : {"a", "b", "c"}) {
    ++totals[s.at(vm).at("r1") + s.at(vm).at("r2")];
  }
  EXPECT_EQ(totals, (std::map<int, int>{{2, 1}, {3, 2}}));
  for (const auto& g : {"r1", "r2"}) {
    std::multiset<int> sizes;
    for (const auto& vm : {"a", "b", "c"}) sizes.insert(s.at(vm).at(g));
    EXPECT_EQ(sizes, (std::multiset<int>{1, 1, 2}));
  }
  // Divides evenly: every stratum the same.
  const auto even = hc::balanced_allocation(1, {"a", "b"}, {"r1"}, 6);
  EXPECT_EQ(even, (hc::StratumSizes{{"a", {{"r1", 3}}}, {"b", {{"r1", 3}}}}));
  EXPECT_THROW(hc::balanced_allocation(1, {}, {"r1"}, 6), std::invalid_argument);
}

TEST(DesignPlan, HarnessPlanPrintsTheStratumTableAndSaysItStoredNothing) {
  const std::string harness = std::string(HARNESS_BINARY_DIR) + "/harness/cli/harness";
  testfiles::TempDir d;
  testfiles::write(d / "confirmatory.yaml", testfiles::with_fixed_pin(testfiles::read(confirmatory())));
  const auto out = run(harness + " plan " + (d / "confirmatory.yaml") + " --hosts " +
                       testfiles::nine_hosts(d / "hosts.yaml") + " 2>&1");
  EXPECT_THAT(out, HasSubstr("campaign confirmatory (kind confirmatory): 180 cases on 9 VM(s), design matched-triplets"));
  EXPECT_THAT(out, HasSubstr("triplets per (vm, regime) stratum (seeded balanced allocation):\n"
                             "vm     slow-structured  slow-random  fast-structured  fast-random  total\n"));
  EXPECT_THAT(out, HasSubstr("total               15           15               15           15     60\n"
                             "12 of 36 strata have one triplet\n"));
  // Coverage known before the run: analytic per comparison and jointly, the warning, the
  // measured (simulated) figure of this design and how to simulate another.
  EXPECT_THAT(out, HasSubstr("expected coverage of the primary intervals at this design (24 strata of 2, 12 strata of 1; "
                             "analytic"));
  EXPECT_THAT(out, HasSubstr("  prespecified 98.75% interval: 0.769 per comparison (variance factor 0.250, 24 df); all "
                             "4 jointly >= 0.349 (target 0.95)\n"));
  EXPECT_THAT(out, HasSubstr("  corrected interval (secondary): 0.905 per comparison (variance factor 0.500, 24 df); "
                             "all 4 jointly >= 0.670\n"));
  EXPECT_THAT(out, HasSubstr("WARNING: below the nominal level: the prespecified 98.75% intervals are expected to cover "
                             "76.9% per comparison and all 4 together at least 34.9% (target 95%); 12 of 36 strata "
                             "have one triplet"));
  EXPECT_THAT(out, HasSubstr("  measured by simulation (tests/statistics/analysis, 2000 datasets x B = 10000, seed 1): "
                             "prespecified 0.76"));
  EXPECT_THAT(out, HasSubstr("stored nothing: no DB given"));
}

// A k-arm campaign (campaigns/policies.yaml: five arms, design.kind matched-blocks) counts blocks,
// not triplets, in the stratum table and the coverage lines (the study's word stays for
// matched-triplets, the test above).
TEST(DesignPlan, HarnessPlanOfAMatchedBlocksCampaignCountsBlocks) {
  const std::string harness = std::string(HARNESS_BINARY_DIR) + "/harness/cli/harness";
  testfiles::TempDir d;
  const auto out = run(harness + " plan " + std::string(HARNESS_SOURCE_DIR) + "/campaigns/policies.yaml --hosts " +
                       testfiles::hosts_file(d / "hosts.yaml", 3) + " 2>&1");
  EXPECT_THAT(out, HasSubstr("design matched-blocks"));
  EXPECT_THAT(out, HasSubstr("arms (k = 5, one case each per matched block):\n"));
  EXPECT_THAT(out, HasSubstr("blocks per (vm, regime) stratum (seeded balanced allocation):\n"));
  EXPECT_THAT(out, HasSubstr("0 of 12 strata have one block\n"));
  EXPECT_THAT(out, HasSubstr("More blocks per stratum"));
  EXPECT_THAT(out, Not(HasSubstr("triplet")));
}

TEST(DesignPlan, HarnessPlanSimulatesCoverageOnRequest) {
  const std::string harness = std::string(HARNESS_BINARY_DIR) + "/harness/cli/harness";
  // smoke.yaml: one stratum of one triplet, the cheapest design: a zero-width interval never
  // covers (the estimate is a draw, the truth is not), and both analyses say so.
  const auto out = run(harness + " plan " + std::string(HARNESS_SOURCE_DIR) + "/campaigns/smoke.yaml --simulate-coverage 2>&1");
  EXPECT_THAT(out, HasSubstr("expected coverage of the primary intervals at this design (1 stratum of 1;"));
  EXPECT_THAT(out, HasSubstr("  prespecified 98.75% interval: 0.000 per comparison"));
  // The analytic lines point at the simulation that follows, not at the flag that asked for it.
  EXPECT_THAT(out, HasSubstr("  measured by simulation: below (--simulate-coverage)\n"));
  EXPECT_THAT(out, Not(HasSubstr("not simulated for this design")));
  EXPECT_THAT(out, HasSubstr("simulated coverage (1 stratum of 1; 2000 datasets x B = 10000, seed 1, independent errors"));
  EXPECT_THAT(out, HasSubstr("  prespecified 98.75% interval: per comparison 0.0000 0.0000 0.0000 0.0000, pooled 0.0000"));
}

// A matched-blocks campaign is simulated for its own arms and declared family (issue 56):
// tests/vm/campaign/policies.yaml, one block of seven arms and four declared comparisons, one
// row per comparison with its label.
TEST(DesignPlan, SimulateCoverageOfAMatchedBlocksCampaignSimulatesItsArmsAndFamily) {
  const std::string harness = std::string(HARNESS_BINARY_DIR) + "/harness/cli/harness";
  const auto out = run(harness + " plan " + std::string(HARNESS_SOURCE_DIR) + "/tests/vm/campaign/policies.yaml " +
                       "--simulate-coverage 2>&1");
  EXPECT_THAT(out, HasSubstr("expected coverage of the primary intervals at this design"));
  EXPECT_THAT(out, HasSubstr("simulated coverage (1 stratum of 1; 2000 datasets x B = 10000, seed 1, independent "
                             "errors, k = 7 arms, m = 4 comparisons"));
  EXPECT_THAT(out, HasSubstr("  prespecified 98.75% interval: per comparison 0.0000 0.0000 0.0000 0.0000, pooled "
                             "0.0000"));
  for (const char* label : {"compute: bounded-reclaim / static-zram", "sqlite: bounded-reclaim / static-zram",
                            "compute: senpai / static-zram", "compute: bounded-loop / static-zram"})
    EXPECT_THAT(out, HasSubstr(std::string("    ") + label)) << label;
  EXPECT_THAT(out, Not(HasSubstr("nothing simulated")));
}

// The coverage simulation of a five-arm campaign (campaigns/policies.yaml: five arms, 8 declared
// comparisons, 12 strata of 3 blocks) through the family `harness plan --simulate-coverage` uses
// (plan/coverage_family.hpp): one figure per declared comparison in the declared order, each a
// share in [0, 1], and the seed reproduces the numbers. Small (40 datasets x B = 4,000; at
// 1 - 0.05/8 the simulation wants at least 10 replicates in each tail): a shape check, not a figure.
TEST(DesignPlan, CoverageSimulationOfAFiveArmCampaignHasOneFigurePerDeclaredComparison) {
  auto c = hc::load_campaign(std::string(HARNESS_SOURCE_DIR) + "/campaigns/policies.yaml");
  c.pinned_commit = std::string(40, '0');
  const auto s = hc::plan(c);
  std::vector<int> sizes;
  for (const auto& [vm, per] : s.strata)
    for (const auto& [regime, n] : per)
      if (n > 0) sizes.push_back(n);
  ASSERT_EQ(sizes, std::vector<int>(12, 3));
  analysis::CoverageSimOptions o;
  o.family = hc::coverage_family(c);
  ASSERT_EQ(o.family.arms, 5);
  ASSERT_EQ(c.comparisons.size(), 8u);
  ASSERT_EQ(o.family.comparisons.size(), c.comparisons.size());
  for (std::size_t j = 0; j < c.comparisons.size(); ++j) {
    const auto parsed = hc::parse_comparison(c.comparisons[j]);
    ASSERT_TRUE(parsed) << c.comparisons[j];
    EXPECT_EQ(o.family.comparisons[j].label,
              analysis::comparison_label(*analysis::parse_canary(parsed->canary), parsed->treatment, parsed->comparator));
  }
  o.level = analysis::simultaneous_level(c.alpha, 8);  // as `harness plan`
  o.datasets = 40;
  o.replicates = 4000;
  o.threads = 2;
  for (auto model : {analysis::CoverageModel::Independent, analysis::CoverageModel::Triplet}) {
    o.model = model;
    o.seed = 1;
    const auto a = analysis::simulate_coverage(sizes, o), b = analysis::simulate_coverage(sizes, o);
    ASSERT_EQ(a.plain.size(), 8u);
    ASSERT_EQ(a.corrected.size(), 8u);
    for (std::size_t j = 0; j < 8; ++j) {
      EXPECT_GE(a.plain[j], 0.0);
      EXPECT_LE(a.plain[j], 1.0);
      EXPECT_GE(a.corrected[j], 0.0);
      EXPECT_LE(a.corrected[j], 1.0);
    }
    EXPECT_GE(a.plain_joint, 0.0);
    EXPECT_LE(a.plain_joint, *std::min_element(a.plain.begin(), a.plain.end()));
    EXPECT_EQ(a.plain, b.plain);  // the seed reproduces
    EXPECT_EQ(a.corrected, b.corrected);
    EXPECT_EQ(a.plain_joint, b.plain_joint);
    EXPECT_EQ(a.corrected_joint, b.corrected_joint);
    const std::string text = analysis::format_coverage_sim(a);
    EXPECT_THAT(text, HasSubstr("k = 5 arms, m = 8 comparisons"));
    for (const auto& k : o.family.comparisons) EXPECT_THAT(text, HasSubstr("    " + k.label + " ")) << k.label;
    o.seed = 2;
    const auto other = analysis::simulate_coverage(sizes, o);
    EXPECT_NE(std::make_pair(a.plain, a.corrected), std::make_pair(other.plain, other.corrected));  // other datasets
  }
}

TEST(DesignPlan, HarnessPlanOfAnAbCampaignCountsPairsAndPrintsTheVariants) {
  const std::string harness = std::string(HARNESS_BINARY_DIR) + "/harness/cli/harness";
  testfiles::TempDir d;
  const std::string ab = ci_regression_with(
      d / "ab.yaml", "candidate:\n    sysctls: {vm.swappiness: \"200\"}\n    sysfs: {/sys/kernel/mm/lru_gen/enabled: \"y\"}");
  const auto out = run(harness + " plan " + ab + " 2>&1");
  EXPECT_THAT(out, HasSubstr("pairs (baseline, candidate) per (vm, regime) stratum, for each of 1 configuration(s):\n"));
  EXPECT_THAT(out, HasSubstr("0 of 1 strata have one pair\n"));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("triplet")));
  EXPECT_THAT(out, HasSubstr("variant baseline: nothing set (the guest as booted)\n"));
  EXPECT_THAT(out, HasSubstr("variant candidate: sysctl vm.swappiness=200; sysfs /sys/kernel/mm/lru_gen/enabled=y\n"));
  EXPECT_THAT(out, HasSubstr("judged by `harness check`: 6 assertion(s); 10 metric tolerance(s), each interval at "
                             "99.5% (family-wise alpha 0.05):\n"));
  EXPECT_THAT(out, HasSubstr("\n  reclaim_duration max_ratio "));
}

TEST(DesignPlan, HarnessPlanRefusesAHostsFileWithoutTheCampaignsVmsAndCountsAgentReboots) {
  const std::string harness = std::string(HARNESS_BINARY_DIR) + "/harness/cli/harness";
  testfiles::TempDir d;
  testfiles::write(d / "confirmatory.yaml", testfiles::with_fixed_pin(testfiles::read(confirmatory())));
  // Seven of the nine VMs: refused before anything is asked or stored, the absent ones named.
  testfiles::hosts_file(d / "seven.yaml", 7);
  const auto refused = run(harness + " plan " + (d / "confirmatory.yaml") + " " + (d / "c.db") + " --hosts " +
                           (d / "seven.yaml") + " 2>&1; echo rc=$?");
  EXPECT_THAT(refused, HasSubstr((d / "seven.yaml") + ": no host named vm7, vm8 (" + (d / "confirmatory.yaml") +
                                 " uses 9 VM(s); the file lists vm0, vm1, vm2, vm3, vm4, vm5, vm6)"));
  EXPECT_THAT(refused, HasSubstr("rc=2"));
  EXPECT_FALSE(std::filesystem::exists(d / "c.db"));
  // All nine, no reboots: each case 540 s of phases + 3.8 s overhead.
  const auto plain = run(harness + " plan " + (d / "confirmatory.yaml") + " --hosts " +
                         testfiles::nine_hosts(d / "hosts.yaml") + " 2>&1");
  EXPECT_THAT(plain, HasSubstr("of 540 s of phases + 3.8 s overhead: setup and finish 3.5 s + restoration 0.3 s"));
  // reboot_between_cases on one of them: each of its cases starts on a boot, counted as such.
  std::string rebooting = testfiles::read(d / "hosts.yaml");
  const std::string vm3 = "{name: vm3, ";
  rebooting.replace(rebooting.find(vm3), vm3.size(), "{name: vm3, reboot_between_cases: true, ");
  testfiles::write(d / "rebooting.yaml", rebooting);
  const auto rb = run(harness + " plan " + (d / "confirmatory.yaml") + " --hosts " + (d / "rebooting.yaml") + " 2>&1");
  EXPECT_THAT(rb, HasSubstr("of 540 s of phases + 13.8 s overhead: a boot per case 10.0 s (assumed 10 s, not yet measured) + setup and finish 3.5 s"));
}

TEST(DesignPlan, HarnessPlanRefusesABootingVariantOnHostsItCannotBoot) {
  // ci-regression with a cmdline candidate: fine on local-qemu (it boots each case's guest);
  // with --hosts naming a VM that is not `local: true` the candidate would never be booted.
  const std::string harness = std::string(HARNESS_BINARY_DIR) + "/harness/cli/harness";
  testfiles::TempDir d;
  ci_regression_with(d / "ci.yaml", "candidate: {cmdline: [transparent_hugepage=never]}");
  testfiles::hosts_file(d / "remote.yaml", 1);
  const auto refused = run(harness + " plan " + (d / "ci.yaml") + " --hosts " + (d / "remote.yaml") + " 2>&1; echo rc=$?");
  EXPECT_THAT(refused, HasSubstr((d / "ci.yaml") + ": variants.candidate boots a kernel image or cmdline, but the engine "
                                                   "does not boot vm0 for each case"));
  EXPECT_THAT(refused, HasSubstr("rc=2"));
  const auto local = run(harness + " plan " + (d / "ci.yaml") + " 2>&1; echo rc=$?");
  EXPECT_THAT(local, Not(HasSubstr("boots a kernel image or cmdline"))) << local;
  EXPECT_THAT(local, HasSubstr("rc=0")) << local;
}

namespace {

/// Runs `cmd` with this thread pinned to one core: `harness plan` then counts one online core
/// (harness/pool/local_guest/local_host.cpp online_cpus: sched_getaffinity, inherited), so
/// every local guest is beyond cores - 1 on any machine. Returns what it printed.
std::string on_one_core(const std::string& cmd) {
  cpu_set_t before, one;
  EXPECT_EQ(::sched_getaffinity(0, sizeof before, &before), 0);
  int first = 0;
  while (first < CPU_SETSIZE && !CPU_ISSET(first, &before)) ++first;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  EXPECT_EQ(::sched_setaffinity(0, sizeof one, &one), 0);
  const std::string out = run(cmd);
  EXPECT_EQ(::sched_setaffinity(0, sizeof before, &before), 0);
  return out;
}

/// Where `what` first appears in `out` (npos fails the test).
std::size_t at(const std::string& out, const std::string& what) {
  const auto p = out.find(what);
  EXPECT_NE(p, std::string::npos) << "no '" << what << "' in:\n" << out;
  return p;
}

}  // namespace

// Issue 59 item 2: the researcher's step of docs/RESEARCHER.md (`harness plan campaigns/policies.yaml`) on a
// machine too small for its three local guests. Before: exit 2, the capacity refusal and no
// arm, comparison or schedule. Now a preview prints the whole design, the summary, then the
// refusal with its remedy as a warning, and exits 0; preregistration (a DB) still refuses,
// after the same design, storing nothing.
TEST(DesignPlan, APreviewBeyondCapacityPrintsTheWholeDesignThenTheRefusal) {
  const std::string harness = std::string(HARNESS_BINARY_DIR) + "/harness/cli/harness";
  testfiles::TempDir d;
  testfiles::write(d / "policies.yaml",
                   testfiles::with_fixed_pin(testfiles::read(std::string(HARNESS_SOURCE_DIR) + "/campaigns/policies.yaml")));
  const std::string env = "XDG_CACHE_HOME=" + (d / "cache") + " ";
  const std::string preview = on_one_core(env + harness + " plan " + (d / "policies.yaml") + " 2>&1; echo exit=$?");
  EXPECT_THAT(preview, HasSubstr("\nexit=0\n"));
  const auto arms = at(preview, "arms (k = 5, one case each per matched block):\n");
  const auto comparisons = at(preview, "comparisons (declared, m = 8");
  const auto strata = at(preview, "blocks per (vm, regime) stratum (seeded balanced allocation):\n");
  const auto capacity = at(preview, "  REFUSED\n");
  const auto wall = at(preview, "expected wall time: ");
  const auto sha = at(preview, "schedule sha256 ");
  const auto refusal = at(preview, "NOT PLANNABLE AS IS (`harness plan FILE DB` and `harness run` refuse it): capacity: "
                                   "the guests do not fit their host(s)");
  EXPECT_LT(arms, comparisons);
  EXPECT_LT(comparisons, strata);
  EXPECT_LT(strata, capacity);
  EXPECT_LT(capacity, wall);
  EXPECT_LT(wall, sha);
  EXPECT_LT(sha, refusal);
  EXPECT_THAT(preview.substr(refusal), HasSubstr("set provider.overcommit: true"));
  EXPECT_THAT(preview.substr(refusal), HasSubstr("stored nothing: no DB given (`harness plan FILE DB` preregisters this "
                                                 "plan once nothing above refuses it)"));
  const std::string stored = on_one_core(env + harness + " plan " + (d / "policies.yaml") + " " + (d / "p.db") +
                                         " 2>&1; echo exit=$?");
  EXPECT_THAT(stored, HasSubstr("\nexit=2\n"));
  EXPECT_THAT(stored, HasSubstr("arms (k = 5, one case each per matched block):\n"));
  EXPECT_THAT(stored, HasSubstr("harness plan: capacity: the guests do not fit their host(s)"));
  EXPECT_THAT(stored, HasSubstr("stored nothing: capacity refused\n"));
  EXPECT_THAT(stored, Not(HasSubstr("NOT PLANNABLE AS IS")));
  EXPECT_FALSE(std::filesystem::exists(d / "p.db"));
}

// Issue 59 item 6 (plan): the 180 case rows of the confirmatory design came before the wall
// time and the coverage. Now they are printed only with --cases, and the summary (capacity,
// wall time, schedule SHA-256) comes last either way.
TEST(DesignPlan, CaseRowsOnlyOnRequestAndTheSummaryLast) {
  const std::string harness = std::string(HARNESS_BINARY_DIR) + "/harness/cli/harness";
  testfiles::TempDir d;
  testfiles::write(d / "confirmatory.yaml", testfiles::with_fixed_pin(testfiles::read(confirmatory())));
  const std::string cmd = "XDG_CACHE_HOME=" + (d / "cache") + " " + harness + " plan " + (d / "confirmatory.yaml") +
                          " --hosts " + testfiles::nine_hosts(d / "hosts.yaml");
  const std::string row = "confirmatory-vm";  // the start of a case id, printed only in a case row
  const auto brief = run(cmd + " 2>&1");
  EXPECT_THAT(brief, Not(HasSubstr(row)));
  EXPECT_THAT(brief, HasSubstr("schedule: 180 case(s) in run order (`--cases` lists them; `--out FILE` writes the "
                               "schedule JSON)\n"));
  EXPECT_LT(at(brief, "expected coverage of the primary intervals"), at(brief, "expected wall time: "));
  const auto listed = run(cmd + " --cases 2>&1");
  std::size_t rows = 0;
  for (std::size_t p = listed.find(row); p != std::string::npos; p = listed.find(row, p + 1)) ++rows;
  EXPECT_EQ(rows, 180u);
  EXPECT_LT(at(listed, "schedule (run order per VM; ordinal, VM, case id):\n"), at(listed, row));
  EXPECT_LT(listed.rfind(row), at(listed, "expected wall time: "));
  EXPECT_LT(at(listed, "expected wall time: "), at(listed, "schedule sha256 "));
}
