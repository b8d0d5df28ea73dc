#pragma once
// Synthetic campaign DBs with KNOWN true ratios, for unit tests, statistics tests and the benchmark.
// Never used on real data. Model (log scale, per case and canary):
//   p99 multiplier m = exp(stratum_effect + triplet_effect + config_effect[canary][config] + eps),
//   eps ~ N(0, case_sd^2); every request's response = m x pattern_i, with one fixed pattern per
//   canary shared by all cases, so a case's pressure-phase p99 is m x p99(pattern) (up to 1 ns
//   rounding) and the true ratio of comparison j is exactly true_ratios[j].
// With extra_arms, each block has one case per arm (3 + extra), and write_arms fills the `arms`
// table (schema version 6), so a k-arm campaign can be analysed with its declared comparisons.
// Tables written: cases (spec_json per harness/case/SPEC.md), phases, canary_requests, telemetry,
// controller_events (trigger), reclaim_actions (bounded-reclaim), restoration, campaign_meta, schedule.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace analysis {

/// An arm of a synthetic campaign beyond the study's three (a k-arm campaign). Its cases behave
/// like the study's arm at position `like` (0 static zram: would_trigger; 1 delayed activation:
/// backend_on after the trigger; 2 bounded reclaim: one memory.reclaim write of the dose) and its
/// p99 is static zram's times exp(log_effect[canary]) (up to the shared noise).
struct SyntheticArm {
  std::string name, policy;
  std::string params_json = "{}";  ///< canonical JSON (keys sorted, no whitespace)
  std::array<double, 2> log_effect{0.0, 0.0};
  int like = 0;
};

/// Shape and truth of a synthetic confirmatory campaign.
struct SyntheticOptions {
  std::uint64_t seed = 1;
  int vms = 5;                                   ///< vm0..vm{n-1}
  std::vector<std::string> regimes{"slow-structured", "slow-random", "fast-structured", "fast-random"};
  int triplets_per_stratum = 3;
  /// True ratios in primary_comparisons() order: compute/static, compute/delayed, sqlite/static, sqlite/delayed.
  std::array<double, 4> true_ratios{0.938, 0.704, 0.993, 0.765};
  double case_sd = 0.05;          ///< sd of eps (log scale)
  double stratum_sd = 0.2, triplet_sd = 0.05;
  double base_p99_us = 20000;     ///< p99 scale of the compute canary; sqlite uses 1.5x
  int warmup_s = 10, pressure_s = 30, recovery_s = 10;  ///< phase lengths, s
  int period_ms = 100;
  std::string accelerator = "kvm";
  /// The campaign YAML stored as the DB's plan (campaign_meta campaign_yaml), e.g. a campaign
  /// file's text, so that `harness compare` lists its settings; "" = a placeholder comment.
  std::string campaign_yaml{};
  int infra_failed_cases = 0;     ///< extra cases recorded as infra_failed (not analysed)
  int missing_cases = 0;          ///< extra schedule rows with no case record
  /// Arms after the study's three in every block (empty: the study's campaign, written as before).
  std::vector<SyntheticArm> extra_arms{};
  /// The plan JSON's analysis.comparisons (campaign_meta.schedule_json {"analysis": {"comparisons":
  /// [...]}}), spellings of analysis/data/arms.hpp; empty = no schedule_json (the study's four).
  std::vector<std::string> comparisons{};
  /// Writes the `arms` table (results/schema.sql, version 6): the study's three (bounded-reclaim
  /// {"dose_mib":96}) then extra_arms.
  bool write_arms = false;
};

/// The benchmark's campaign (tests/bench/analysis): 5 VMs x 4 regimes x 3 triplets x 3
/// configurations = 180 cases, phases 120/300/120 s (quick: 12/30/12 s), 2 canaries at 100 ms
/// = 1.94 million canary records (quick: 194,400).
SyntheticOptions benchmark_campaign(bool quick = false);

/// Writes a new campaign DB at `path` (overwrites). Returns the number of canary_requests rows.
/// Errors: results::DbError, std::invalid_argument for a true ratio <= 0 or an empty design.
std::int64_t write_synthetic_campaign(const std::string& path, const SyntheticOptions& opt);

/// One synthetic pilot dose: its cases' worst reclaim duration and lowest achieved/requested ratio.
struct SyntheticDose {
  std::int64_t dose_bytes = 0;
  double worst_duration_s = 0.5;
  double min_achieved_ratio = 1.0;
  int write_errno = 0;           ///< errno of the worst case's write (0 = success)
  bool oom = false;              ///< one case records an OOM kill
  bool restoration_clean = true;
  /// Conservative achieved / requested of the worst case (other regimes: max(this, 1.1));
  /// nullopt = concurrent_estimate_bytes and achieved_conservative_bytes NULL (pre-v2 DB).
  std::optional<double> min_conservative_ratio{};
  int regimes = 4;               ///< cases written: one per regime for the first `regimes` of the four
};

/// Writes a pilot DB: vm0, one bounded-reclaim case per (dose, regime) with a reclaim_actions row.
/// `campaign_yaml`: the pilot campaign's text stored as its plan (campaign_meta campaign_yaml);
/// a confirmatory campaign takes its dose from a pilot DB only when that parses
/// (harness/campaign/plan/pilot_match.hpp), so pass e.g. campaigns/pilot.yaml's text; "" = a
/// placeholder comment (enough for `harness pilot-select`).
std::int64_t write_synthetic_pilot(const std::string& path, const std::vector<SyntheticDose>& doses,
                                   std::uint64_t seed = 1, int pressure_s = 20, const std::string& campaign_yaml = "");

/// A synthetic A/B campaign (design ab-pairs): per (vm, regime, repeat,
/// configuration) one baseline and one candidate case, spec_json.variant {name, pair_id, ...}
/// as harness/case/SPEC.md, case ids <campaign>-<vm>-<regime>-r<repeat>-<configuration>-<variant>.
/// Truth: the candidate's pressure-phase p99 (both canaries), bg stall and refault counters
/// and memory.reclaim write duration are the baseline's times the given ratios (each case
/// also gets independent log-normal noise of sd case_sd); every other metric (trigger delay
/// 4 s, swap-out, restoration 3 s, achieved/requested 1.2) is equal in both variants.
struct SyntheticAbOptions {
  std::uint64_t seed = 1;
  int vms = 2;                                   ///< vm0..vm{n-1}
  std::vector<std::string> regimes{"slow-structured", "fast-random"};
  int pairs_per_stratum = 3;                     ///< repeats per (vm, regime, configuration)
  double p99_ratio = 1.0, stall_ratio = 1.0, reclaim_ratio = 1.0;  ///< candidate / baseline (> 0)
  double stall_scale = 1.0;       ///< baseline stall/refault growth scale; 0 = counters stay 0
  double case_sd = 0.05, stratum_sd = 0.2;       ///< log-scale noise
  int warmup_s = 3, pressure_s = 10, recovery_s = 3;  ///< phase lengths, s
  /// The campaign name its cases carry (cases.campaign, case-id prefix): the `name` of the
  /// campaign file `harness check FILE --judge DB` judges it with.
  std::string campaign = "synthetic-ab";
  /// The campaign YAML stored as the DB's plan (campaign_meta campaign_yaml): the text of the
  /// file it is judged with, since `harness check --judge` compares the stored design with the
  /// file's (harness/campaign/check/check_judge.hpp). "" = a placeholder comment (no design).
  std::string campaign_yaml{};
};

/// Writes a new A/B campaign DB at `path` (overwrites). Returns the canary_requests rows.
/// Errors: results::DbError, std::invalid_argument for a ratio <= 0 or an empty design.
std::int64_t write_synthetic_ab(const std::string& path, const SyntheticAbOptions& opt);

}  // namespace analysis
