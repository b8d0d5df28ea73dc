// design ab-pairs: the variants and regression keys load into the model; bad
// values are refused with FILE:LINE:COL and the field; the plan holds complete pairs in a
// seeded, blocked order with the documented ids; the runner's reboot argv carries the
// variant's image and kernel parameters.
#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/store/campaign_db.hpp"
#include "harness/campaign/runner/runner.hpp"
#include "harness/campaign/runner/worker.hpp"
#include "harness/campaign/plan/schedule.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "test_files.hpp"

namespace hc = harness::campaign;
using ::testing::HasSubstr;

namespace {

const std::string kAb = R"(name: ab
kind: ci
seed: 7
pinned_commit: any
vm: {vcpus: 1, memory_mib: 1024}
provider:
  kind: local-qemu
  count: 2
  fresh_guest_per_case: true
phases_s: {warmup: 5, pressure: 20, recovery: 5}
cgroups: {parent: harness, bg_memory_max_mib: 300}
backend:
  zram: {disksize_mib: 512, algorithm: lzo-rle, priority: 100}
  swapfile: {path: /var/lib/harness/swapfile, priority: 10}
pressure: {allocation_mib: 600, active_set_mib: 128}
regimes:
  - {name: fast-random, rate_mib_s: 64, contents: random}
  - {name: slow-structured, rate_mib_s: 16, contents: structured}
canaries: {}
trigger: {}
configurations: [static-zram, delayed-activation, bounded-reclaim]
design:
  kind: ab-pairs
  repeats: 3
  dose_mib: 96
variants:
  baseline: {}
  candidate:
    sysctls: {vm.swappiness: 200, vm.dirty_ratio: 10}
    sysfs: {/sys/kernel/mm/lru_gen/enabled: "y"}
    cmdline: [harness.abtest=1]
regression:
  alpha: 0.1
  tolerances:
    reclaim_duration: {max_ratio: 1.2}
    achieved_ratio: {min_ratio: 0.9}
)";

/// Replaces the first `from` in the A/B text; the loader's error ("(accepted)" when none).
std::string error_of(const std::string& from, const std::string& to, const std::string& file = "ab.yaml") {
  std::string text = kAb;
  const auto p = text.find(from);
  if (p == std::string::npos) return "TEST BUG: '" + from + "' not in the text";
  text.replace(p, from.size(), to);
  try {
    hc::parse_campaign(text, file);
  } catch (const hc::CampaignError& e) {
    return e.what();
  }
  return "(accepted)";
}

/// 1-based line of the first line of kAb containing `needle`.
int line_of(const std::string& needle) {
  std::istringstream in(kAb);
  std::string l;
  for (int n = 1; std::getline(in, l); ++n)
    if (l.find(needle) != std::string::npos) return n;
  return -1;
}

std::string at(const std::string& needle) { return "ab.yaml:" + std::to_string(line_of(needle)) + ":"; }

}  // namespace

TEST(AbPairsYaml, LoadsVariantsAndTolerances) {
  const auto c = hc::parse_campaign(kAb, "ab.yaml");
  EXPECT_EQ(c.design, "ab-pairs");
  EXPECT_EQ(c.repeats, 3);
  ASSERT_EQ(c.variants.size(), 2u);
  EXPECT_EQ(c.variants[0].name, "baseline");
  EXPECT_TRUE(c.variants[0].sysctls.empty());
  EXPECT_EQ(c.variants[1].name, "candidate");
  // sorted by name; numbers become their text
  EXPECT_EQ(c.variants[1].sysctls,
            (std::vector<std::pair<std::string, std::string>>{{"vm.dirty_ratio", "10"}, {"vm.swappiness", "200"}}));
  EXPECT_EQ(c.variants[1].sysfs,
            (std::vector<std::pair<std::string, std::string>>{{"/sys/kernel/mm/lru_gen/enabled", "y"}}));
  EXPECT_EQ(c.variants[1].cmdline, std::vector<std::string>{"harness.abtest=1"});
  EXPECT_EQ(c.variants[1].line, line_of("  candidate:"));
  EXPECT_DOUBLE_EQ(c.regression_alpha, 0.1);
  ASSERT_EQ(c.tolerances.size(), 2u);
  EXPECT_EQ(c.tolerances[0].metric, "reclaim_duration");
  EXPECT_EQ(c.tolerances[0].max_ratio, 1.2);
  EXPECT_FALSE(c.tolerances[0].min_ratio);
  EXPECT_EQ(c.tolerances[1].metric, "achieved_ratio");
  EXPECT_EQ(c.tolerances[1].min_ratio, 0.9);
  // alpha defaults to 0.05
  EXPECT_DOUBLE_EQ(hc::parse_campaign(kAb.substr(0, kAb.find("regression:")), "ab.yaml").regression_alpha, 0.05);
}

TEST(AbPairsYaml, BadValuesNameFileLineAndField) {
  struct Case {
    std::string from, to, where, field, says;
  };
  const std::vector<Case> cases{
      {"vm.swappiness: 200", "VM.Swappiness: 200", "vm.dirty_ratio", "variants.candidate.sysctls.VM.Swappiness",
       "is not a sysctl name"},
      {"vm.swappiness: 200", "kernel.panic_on_oops: 1", "vm.dirty_ratio",
       "variants.candidate.sysctls.kernel.panic_on_oops", "is not a sysctl a variant may set"},
      {"vm.swappiness: 200", "vm.panic_on_oom: 1", "vm.dirty_ratio", "variants.candidate.sysctls.vm.panic_on_oom",
       "is not a sysctl a variant may set"},
      {"/sys/kernel/mm/lru_gen/enabled", "/sys/kernel/mm/ksm/run", "sysfs:",
       "variants.candidate.sysfs./sys/kernel/mm/ksm/run", "is not a sysfs knob a variant may set"},
      {"vm.swappiness: 200", "vm.swappiness: \"1;reboot\"", "vm.dirty_ratio",
       "variants.candidate.sysctls.vm.swappiness", "does not match"},
      {"vm.swappiness: 200", "vm.swappiness: null", "vm.dirty_ratio", "variants.candidate.sysctls.vm.swappiness",
       "expected a scalar value"},
      {"/sys/kernel/mm/lru_gen/enabled", "/sys/block/zram0/disksize", "sysfs:",
       "variants.candidate.sysfs./sys/block/zram0/disksize", "under /sys/kernel/mm/"},
      {"/sys/kernel/mm/lru_gen/enabled", "/sys/kernel/mm/../../etc/x", "sysfs:",
       "variants.candidate.sysfs./sys/kernel/mm/../../etc/x", "'..' component"},
      {"[harness.abtest=1]", "[harness.abtest=1, \"init=/bin/sh\"]", "cmdline:", "variants.candidate.cmdline[1]",
       "does not match"},
      {"    cmdline:", "    colour: red\n    cmdline:", "colour:", "variants.candidate.colour", "unknown key"},
      {"  baseline: {}", "  baseline: {}\n  third: {}", "third:", "variants.third", "unknown key"},
      {"  baseline: {}", "  basline: {}", "basline", "variants.basline", "did you mean 'baseline'"},
      {"reclaim_duration:", "reclaim_speed:", "reclaim_speed", "regression.tolerances.reclaim_speed",
       "not a regression metric (reclaim_duration, achieved_ratio, trigger_delay"},
      {"{min_ratio: 0.9}", "{min_ratio: 0.9, max_ratio: 0.8}", "achieved_ratio", "regression.tolerances.achieved_ratio.min_ratio",
       "must be below max_ratio"},
      {"{max_ratio: 1.2}", "{max_ratio: 0}", "reclaim_duration", "regression.tolerances.reclaim_duration.max_ratio",
       "must be > 0"},
      {"{max_ratio: 1.2}", "{}", "reclaim_duration", "regression.tolerances.reclaim_duration",
       "give max_ratio, min_ratio or both"},
      {"{max_ratio: 1.2}", "{max_ratoi: 1.2}", "reclaim_duration", "regression.tolerances.reclaim_duration.max_ratoi",
       "did you mean 'max_ratio'"},
      {"alpha: 0.1", "alpha: 1.5", "alpha:", "regression.alpha", "must lie in (0, 1)"},
      {"fresh_guest_per_case: true", "fresh_guest_per_case: false", "variants:", "variants",
       "needs provider.fresh_guest_per_case: true"},
  };
  for (const auto& k : cases) {
    SCOPED_TRACE(k.to);
    // The replacement may add lines; find the line in the edited text.
    std::string text = kAb;
    text.replace(text.find(k.from), k.from.size(), k.to);
    std::istringstream in(text);
    std::string l;
    int line = -1;
    for (int n = 1; std::getline(in, l); ++n)
      if (l.find(k.where) != std::string::npos) {
        line = n;
        break;
      }
    const std::string e = error_of(k.from, k.to);
    EXPECT_THAT(e, HasSubstr("ab.yaml:" + std::to_string(line) + ":"));
    EXPECT_THAT(e, HasSubstr("field " + k.field + ": "));
    EXPECT_THAT(e, HasSubstr(k.says));
  }
}

TEST(AbPairsYaml, DesignAndProviderRules) {
  // variants and regression belong to ab-pairs only
  std::string e = error_of("  kind: ab-pairs\n  repeats: 3", "  kind: matched-triplets\n  repeats: 3");
  EXPECT_THAT(e, HasSubstr(at("variants:")));
  EXPECT_THAT(e, HasSubstr("field variants: only for design.kind ab-pairs"));
  {
    std::string text = kAb;
    text.replace(text.find("  kind: ab-pairs"), 16, "  kind: matched-triplets");
    text = text.substr(0, text.find("variants:")) + text.substr(text.find("regression:"));
    try {
      hc::parse_campaign(text, "ab.yaml");
      ADD_FAILURE() << "accepted";
    } catch (const hc::CampaignError& err) {
      EXPECT_THAT(err.what(), HasSubstr("field regression: only for design.kind ab-pairs"));
    }
  }
  // ab-pairs needs variants
  const std::string no_variants = kAb.substr(0, kAb.find("variants:"));
  try {
    hc::parse_campaign(no_variants, "ab.yaml");
    ADD_FAILURE() << "accepted";
  } catch (const hc::CampaignError& err) {
    EXPECT_THAT(err.what(), HasSubstr(at("  kind: ab-pairs")));
    EXPECT_THAT(err.what(), HasSubstr("field design.kind: ab-pairs needs a top-level `variants:"));
  }
  // cmdline and kernel need local-qemu
  const std::string hosts = "provider:\n  kind: hosts\n  hosts_file: h.yaml\n  vms: [vm0, vm1]\n";
  std::string text = kAb;
  text.replace(text.find("provider:"), text.find("phases_s:") - text.find("provider:"), hosts);
  try {
    hc::parse_campaign(text, "ab.yaml");
    ADD_FAILURE() << "accepted";
  } catch (const hc::CampaignError& err) {
    EXPECT_THAT(err.what(), HasSubstr("field variants.candidate.cmdline: needs provider.kind libvirt or local-qemu"));
  }
  text.replace(text.find("    cmdline: [harness.abtest=1]\n"), 31, "    kernel: {image_dir: next}\n");
  try {
    hc::parse_campaign(text, "ab.yaml");
    ADD_FAILURE() << "accepted";
  } catch (const hc::CampaignError& err) {
    EXPECT_THAT(err.what(), HasSubstr("field variants.candidate.kernel: needs provider.kind libvirt or local-qemu"));
  }
  // without cmdline/kernel, a hosts provider is fine
  text.replace(text.find("    kernel: {image_dir: next}\n"), 30, "");
  EXPECT_NO_THROW(hc::parse_campaign(text, "ab.yaml"));
}

TEST(AbPairsYaml, KernelImageDirIsRelativeToTheFileAndNeedsAManifest) {
  testfiles::TempDir d;
  std::string text = kAb;
  text.replace(text.find("    cmdline:"), 0, "    kernel: {image_dir: images/next}\n");
  testfiles::write(d / "ab.yaml", text);
  try {
    hc::load_campaign(d / "ab.yaml");
    ADD_FAILURE() << "accepted without a manifest";
  } catch (const hc::CampaignError& e) {
    EXPECT_THAT(e.what(), HasSubstr("ab.yaml:" + std::to_string(line_of("    sysfs:") + 1) + ":"));
    EXPECT_THAT(e.what(), HasSubstr("field variants.candidate.kernel.image_dir: "));
    EXPECT_THAT(e.what(), HasSubstr("images/next' holds no manifest.json"));
  }
  std::filesystem::create_directories(d / "images/next");
  // A manifest that is not JSON, or names no kernel release, is not an image's either.
  for (const auto& [manifest, says] : std::vector<std::pair<std::string, std::string>>{
           {"{not json", "images/next/manifest.json: "}, {R"({"sha256": "x"})", "manifest.json names no kernel_release"}}) {
    testfiles::write(d / "images/next/manifest.json", manifest);
    try {
      hc::load_campaign(d / "ab.yaml");
      ADD_FAILURE() << "accepted manifest " << manifest;
    } catch (const hc::CampaignError& e) {
      EXPECT_THAT(e.what(), HasSubstr("ab.yaml:" + std::to_string(line_of("    sysfs:") + 1) + ":"));
      EXPECT_THAT(e.what(), HasSubstr("field variants.candidate.kernel.image_dir: "));
      EXPECT_THAT(e.what(), HasSubstr(says));
    }
  }
  testfiles::write(d / "images/next/manifest.json", R"({"kernel_release": "6.12.9-next", "sha256": "x"})");
  try {
    hc::load_campaign(d / "ab.yaml");
    ADD_FAILURE() << "accepted a manifest without the image";
  } catch (const hc::CampaignError& e) {
    EXPECT_THAT(e.what(), HasSubstr("field variants.candidate.kernel.image_dir: "));
    EXPECT_THAT(e.what(), HasSubstr("images/next' has a manifest.json but no vmlinuz, initramfs.cpio.gz, disk-base.img"));
  }
  for (const char* f : {"vmlinuz", "initramfs.cpio.gz", "disk-base.img"}) testfiles::write(d / ("images/next/" + std::string(f)), "x");
  const auto c = hc::load_campaign(d / "ab.yaml");
  EXPECT_EQ(c.variants[1].kernel_release, "6.12.9-next");
  EXPECT_EQ(c.variants[1].kernel_image_dir, std::filesystem::path(d / "images/next").lexically_normal().string());
  EXPECT_TRUE(c.variants[0].kernel_image_dir.empty());
  const auto s = hc::plan(c);
  for (const auto& k : s.cases) {
    const auto& v = k.spec["variant"];
    if (v["name"] == "candidate") {
      EXPECT_EQ(v["kernel_release"], "6.12.9-next");
      EXPECT_EQ(v["kernel_image_dir"], c.variants[1].kernel_image_dir);
    } else {
      EXPECT_TRUE(v["kernel_release"].is_null());
      EXPECT_TRUE(v["kernel_image_dir"].is_null());
    }
  }
}

TEST(AbPairsStored, TheStoredCampaignResolvesItsPathsAgainstTheCampaignFilesFolder) {
  // `harness run DB` runs the YAML stored at plan: a relative kernel.image_dir names the image
  // the plan named, whatever the working directory and wherever the DB lies.
  testfiles::TempDir d;
  std::string text = kAb;
  text.replace(text.find("    cmdline:"), 0, "    kernel: {image_dir: ../images/next}\n");
  std::filesystem::create_directories(d / "images/next");
  testfiles::write(d / "images/next/manifest.json", R"({"kernel_release": "6.12.9-next", "sha256": "x"})");
  for (const char* f : {"vmlinuz", "initramfs.cpio.gz", "disk-base.img"}) testfiles::write(d / ("images/next/" + std::string(f)), "x");
  std::filesystem::create_directories(d / "mine");
  std::filesystem::create_directories(d / "dbs");
  testfiles::write(d / "mine/ab.yaml", text);
  const auto c = hc::load_campaign(d / "mine/ab.yaml");
  const auto planned = hc::plan(c);
  const std::string db_path = d / "dbs/ab.db";
  results::Db db(db_path, results::Db::Mode::Create);
  hc::store_plan(db, c, planned);
  const std::string image = std::filesystem::path(d / "images/next").lexically_normal().string();
  const auto stored = hc::stored_campaign(db, db_path);
  EXPECT_EQ(stored.variants[1].kernel_image_dir, image);
  EXPECT_EQ(hc::plan(stored).sha256_hex, planned.sha256_hex);  // the run plans what was stored
  // A DB planned before campaign_dir was stored, from an absolute campaign file: its folder.
  db.exec("DELETE FROM campaign_meta WHERE key = 'campaign_dir'");
  EXPECT_EQ(hc::stored_campaign(db, db_path).variants[1].kernel_image_dir, image);
  // ... from a relative one: the folder is not known, and the relative path is refused.
  db.exec("UPDATE campaign_meta SET value = 'mine/ab.yaml' WHERE key = 'campaign_file'");
  try {
    hc::stored_campaign(db, db_path);
    ADD_FAILURE() << "a relative image_dir resolved against an unknown folder";
  } catch (const hc::CampaignError& e) {
    EXPECT_THAT(e.what(), HasSubstr("mine/ab.yaml (as stored in " + db_path + "):"));
    EXPECT_THAT(e.what(), HasSubstr("field variants.candidate.kernel.image_dir: '../images/next' is relative"));
    EXPECT_THAT(e.what(), HasSubstr("give the campaign FILE (`harness run FILE DB`)"));
  }
  db.exec("DELETE FROM campaign_meta WHERE key = 'campaign_yaml'");
  EXPECT_THROW(hc::stored_campaign(db, db_path), std::runtime_error);
}

TEST(AbPairsPlan, CompletePairsInASeededBlockedOrder) {
  const auto c = hc::parse_campaign(kAb, "ab.yaml");
  const auto s = hc::plan(c);
  // 2 VMs x 2 regimes x 3 repeats x 3 configurations x 2 variants
  ASSERT_EQ(s.cases.size(), 72u);
  std::map<std::string, std::vector<const hc::ScheduledCase*>> by_vm;
  for (const auto& k : s.cases) by_vm[k.vm].push_back(&k);
  int candidate_first = 0, blocks = 0;
  std::set<std::string> pair_ids;
  for (auto& [vm, seq] : by_vm) {
    const int candidate_first_before = candidate_first, blocks_before = blocks;
    std::sort(seq.begin(), seq.end(), [](auto* a, auto* b) { return a->vm_position < b->vm_position; });
    ASSERT_EQ(seq.size() % 2, 0u);
    for (std::size_t i = 0; i < seq.size(); i += 2) {  // blocked: a pair's two cases run back to back
      const auto& a = *seq[i];
      const auto& b = *seq[i + 1];
      const auto pid = a.spec["variant"]["pair_id"].get<std::string>();
      EXPECT_EQ(pid, b.spec["variant"]["pair_id"]);
      EXPECT_EQ(pid, a.vm + "/" + a.regime + "/" + std::to_string(a.repeat) + "/" + a.configuration);
      EXPECT_TRUE(pair_ids.insert(pid).second) << "pair planned twice: " << pid;
      EXPECT_NE(a.spec["variant"]["name"], b.spec["variant"]["name"]);
      EXPECT_EQ(a.spec["pressure"]["seed"], b.spec["pressure"]["seed"]);  // shared workload seed
      EXPECT_EQ(a.spec["canaries"]["seed"], b.spec["canaries"]["seed"]);
      for (const auto* k : {&a, &b}) {
        const std::string v = k->spec["variant"]["name"];
        EXPECT_EQ(k->case_id, "ab-" + k->vm + "-" + k->regime + "-r" + std::to_string(k->repeat) + "-" +
                                  k->configuration + "-" + v);
        EXPECT_EQ(k->triplet_id, k->vm + "/" + k->regime + "/" + std::to_string(k->repeat) + "/" + v);
        EXPECT_EQ(k->spec["triplet_id"], *k->triplet_id);
        EXPECT_EQ(k->dose_bytes.has_value(), k->configuration == "bounded-reclaim");
      }
      candidate_first += a.spec["variant"]["name"] == "candidate";
      ++blocks;
    }
    // counterbalanced per VM: half of this VM's 18 pairs run the candidate first
    EXPECT_EQ(candidate_first - candidate_first_before, (blocks - blocks_before) / 2) << vm;
  }
  EXPECT_EQ(pair_ids.size(), 36u);
  // the variant order within blocks is seeded, not fixed
  EXPECT_GT(candidate_first, 0);
  EXPECT_LT(candidate_first, blocks);
  // the candidate spec carries its knobs; the baseline's variant has none
  for (const auto& k : s.cases) {
    const auto& v = k.spec["variant"];
    if (v["name"] == "candidate") {
      EXPECT_EQ(v["sysctls"], (nlohmann::json{{"vm.dirty_ratio", "10"}, {"vm.swappiness", "200"}}));
      EXPECT_EQ(v["cmdline"], (nlohmann::json{"harness.abtest=1"}));
    } else {
      EXPECT_TRUE(v["sysctls"].empty());
      EXPECT_TRUE(v["cmdline"].empty());
    }
  }
  // deterministic for a seed; another seed gives another order
  EXPECT_EQ(hc::plan(c).sha256_hex, s.sha256_hex);
  auto c2 = c;
  c2.seed = 8;
  const auto s2 = hc::plan(c2);
  std::vector<std::string> o1, o2;
  for (const auto& k : s.cases) o1.push_back(k.case_id);
  for (const auto& k : s2.cases) o2.push_back(k.case_id);
  EXPECT_NE(o1, o2);
  std::sort(o1.begin(), o1.end());
  std::sort(o2.begin(), o2.end());
  EXPECT_EQ(o1, o2);
  // the schedule round-trips through its stored JSON
  EXPECT_EQ(hc::schedule_from_json(s.json_text).cases.size(), 72u);
  EXPECT_NE(s.json_text.find("\"regression\":{\"alpha\":0.1"), std::string::npos);
}

// The shipped CI file's 6 pairs, for many seeds: always 3 baseline-first pairs (independent
// coin flips gave 6 of 6 for its own seed 2), and the seed decides which; an odd number of
// pairs splits as evenly as it can.
TEST(AbPairsPlan, VariantOrderIsCounterbalancedPerVm) {
  auto c = hc::load_campaign(std::string(HARNESS_SOURCE_DIR) + "/campaigns/ci-regression.yaml");
  std::set<std::vector<bool>> patterns;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    c.seed = seed;
    const auto s = hc::plan(c);
    ASSERT_EQ(s.cases.size(), 12u);
    std::vector<bool> baseline_first;
    for (std::size_t i = 0; i < s.cases.size(); i += 2)
      baseline_first.push_back(s.cases[i].spec["variant"]["name"] == "baseline");
    EXPECT_EQ(std::count(baseline_first.begin(), baseline_first.end(), true), 3) << "seed " << seed;
    patterns.insert(baseline_first);
  }
  EXPECT_GE(patterns.size(), 10u) << "the seed should decide which pairs run the baseline first";
  c.repeats = 5;  // 5 pairs: 2 or 3 baseline-first
  std::set<long> counts;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    c.seed = seed;
    const auto s = hc::plan(c);
    long n = 0;
    for (std::size_t i = 0; i < s.cases.size(); i += 2) n += s.cases[i].spec["variant"]["name"] == "baseline";
    EXPECT_TRUE(n == 2 || n == 3) << "seed " << seed << ": " << n;
    counts.insert(n);
  }
  EXPECT_EQ(counts, (std::set<long>{2, 3}));
}

TEST(AbPairsPlan, OtherDesignsHaveNoVariantInTheirSpecs) {
  const auto c = hc::load_campaign(std::string(HARNESS_SOURCE_DIR) + "/campaigns/smoke.yaml");
  for (const auto& k : hc::plan(c).cases) EXPECT_FALSE(k.spec.contains("variant")) << k.case_id;
  EXPECT_EQ(hc::plan(c).json_text.find("regression"), std::string::npos);
}

TEST(AbPairsRunner, BootRequestCarriesTheVariantsBoot) {
  nlohmann::json spec = {{"case_id", "x"}};
  auto r = hc::boot_request(spec);
  EXPECT_TRUE(r.image_dir.empty());
  EXPECT_TRUE(r.cmdline.empty());
  spec["variant"] = {{"name", "candidate"},
                     {"cmdline", {"harness.abtest=1", "transparent_hugepage=never"}},
                     {"kernel_image_dir", "/img/next"},
                     {"kernel_release", "6.12"}};
  r = hc::boot_request(spec);
  EXPECT_EQ(r.image_dir, "/img/next");
  EXPECT_EQ(r.cmdline, (std::vector<std::string>{"harness.abtest=1", "transparent_hugepage=never"}));
  spec["variant"]["kernel_image_dir"] = nullptr;
  spec["variant"]["cmdline"] = nlohmann::json::array();
  r = hc::boot_request(spec);
  EXPECT_TRUE(r.image_dir.empty());
  EXPECT_TRUE(r.cmdline.empty());
}
