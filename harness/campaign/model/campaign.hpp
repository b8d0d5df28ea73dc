#pragma once
// The campaign model: everything a campaign YAML file (campaigns/*.yaml) fixes before
// a schedule is planned. Loaded and validated by load_campaign() (campaign_yaml.cpp).
//
// Units are in the field names: *_mib (MiB, 2^20 bytes), *_s (seconds), *_ms, *_us.
// Sources: the study, docs/PROTOCOL.md, harness/case/SPEC.md; every key is documented in
// docs/CAMPAIGN.md (checked by tests/unit/docs).
#include "analysis/compare/regression.hpp"
#include "analysis/data/pilot_reading.hpp"
#include "harness/case/spec/spec.hpp"
#include "harness/pool/engine.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace harness::campaign {

struct Campaign;

/// Thrown for an invalid campaign file; what() reads "FILE:LINE:COL: field PATH: message".
class CampaignError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One pressure regime (study Table 2): allocation rate x page contents, and the pressure its
/// cases run under: the campaign's (`pressure`, `cgroups.bg_memory_max_mib`, the spec's slide),
/// or its own where it declares it (docs/CAMPAIGN.md "regimes"; ours: e.g. a cold-memory regime,
/// TMO's setting, with no bg limit and a stationary hot set). The loader fills every value.
struct Regime {
  std::string name;          ///< [a-z0-9-]+, e.g. "fast-random"; a stratum part
  double rate_mib_s = 0;     ///< pressure-gen allocation rate, MiB/s (> 0)
  std::string contents;      ///< "structured" (compressible) | "random" (incompressible)
  std::int64_t allocation_mib = 0;  ///< pressure-gen's allocation, MiB (the regime's, else pressure.allocation_mib)
  std::int64_t active_set_mib = 0;  ///< its re-touched part, MiB (the regime's, else pressure.active_set_mib)
  /// Speed of the active set through the allocation, MiB/s (the regime's, else the case spec's
  /// default, harness/case/spec/spec.hpp kDefaultActiveSetSlideMibS; 0 = stationary).
  double active_set_slide_mib_s = harness::case_::kDefaultActiveSetSlideMibS;
  /// bg memory.max, MiB (the regime's, else cgroups.bg_memory_max_mib); nullopt = no limit (the
  /// regime says `none`: nothing forces reclaim, only a proactive policy does).
  std::optional<std::int64_t> bg_memory_max_mib;
  /// The keys among allocation_mib, active_set_mib, active_set_slide_mib_s, bg_memory_max_mib
  /// that the regime declares, in that order (the others are the campaign's).
  std::vector<std::string> declared;
  int line = 0;              ///< line in the campaign file
};

/// The pressure settings `g` declares, as {key: value} in the file's units (bg_memory_max_mib
/// null for `none`); {} when it declares none. Part of the A/B comparison settings and of the
/// pilot match only when not empty, so that campaigns without them keep their digests.
nlohmann::json declared_pressure_json(const Regime& g);

/// "regimes[i].bg_memory_max_mib" when regime `g` of `c` declares its own bg limit (or none),
/// else "cgroups.bg_memory_max_mib": where the limit its cases run under is written.
std::string bg_limit_field(const Campaign& c, const Regime& g);

/// One arm (harness/case/control/policy.hpp): a registered policy with its parameters, whose cases
/// carry its name as their `configuration`.
struct Arm {
  std::string name;       ///< [a-z][a-z0-9-]{0,39}; the cases' configuration, a case-id suffix
  std::string policy;     ///< a registered policy (`harness plan --list-policies`)
  /// The policy's parameters, validated with defaults filled. A study arm listed by name
  /// (`study`) keeps {} here: its dose (bounded-reclaim) is the design's, filled per case.
  nlohmann::json params = nlohmann::json::object();
  /// A study arm listed by name: its specs carry no `policy` object (SPEC.md), so every plan
  /// of the study's campaigns keeps its hash.
  bool study = false;
  int line = 0;           ///< line in the campaign file
};

/// A CI assertion evaluated by `harness check` over the campaign DB.
struct Assertion {
  std::string kind;  ///< see assertions.hpp for the kinds and their meaning
  std::optional<double> min;    ///< lower bound (e.g. achieved/requested ratio)
  std::optional<double> max;    ///< upper bound (e.g. seconds)
  int line = 0;                 ///< line in the campaign file (for reports)
};

/// One side of an A/B comparison (design.kind ab-pairs): what differs between the
/// baseline and the candidate guest. Applied per case: sysctls and sysfs knobs by the case
/// executor (written before the case, read back, restored at restoration); kernel and
/// cmdline by the engine at the guest's boot (Capabilities::boot_variants; verified by the executor).
struct Variant {
  std::string name;                      ///< "baseline" | "candidate" (case id suffix)
  /// sysctl name (dotted, `[a-z0-9_.]+`, e.g. "vm.swappiness") -> value written to
  /// /proc/sys/<name with dots as slashes>. Ordered by name.
  std::vector<std::pair<std::string, std::string>> sysctls;
  /// absolute path under /sys/kernel/mm/ (e.g. "/sys/kernel/mm/lru_gen/enabled") -> value.
  std::vector<std::pair<std::string, std::string>> sysfs;
  /// Extra kernel command-line parameters (engines that boot each case's guest), e.g. "transparent_hugepage=never".
  std::vector<std::string> cmdline;
  /// A guest image directory built by `harness vm image --kernel ... --out DIR` (engines that
  /// boot each case's guest; relative paths: to the campaign file's directory). Empty = the default image.
  std::string kernel_image_dir;
  /// uname -r the executor requires (filled from the image's manifest.json at plan time;
  /// empty = not checked).
  std::string kernel_release;
  int line = 0;                          ///< line of variants.<name> in the campaign file
};

/// Tolerance of one regression metric (regression.tolerances.<metric>), on the ratio
/// candidate/baseline: analysis/stats/paired_ratio.hpp MetricTolerance (metric, max_ratio,
/// min_ratio, line in the campaign file).
using Tolerance = analysis::MetricTolerance;

/// A sequential A/B check (`harness check --until-decided --max-pairs N`,
/// check_sequential.hpp): set on the campaign the check plans, never by the YAML. The plan
/// then holds `cap_repeats` repeats per stratum (Campaign::repeats) and records this in its
/// schedule JSON ("sequential"), so the DB says what was preregistered.
struct SequentialDesign {
  int max_pairs = 0;      ///< --max-pairs as given
  int first_repeats = 0;  ///< design.repeats as written: the pairs per stratum of each look
  int cap_repeats = 0;    ///< repeats per stratum at the cap (max_pairs / pairs per repeat)
};

/// A validated campaign. Every field has a value (defaults applied by the loader).
struct Campaign {
  std::string file;             ///< path it was loaded from
  /// The folder relative paths of the file resolve against (variants.*.kernel.image_dir;
  /// design.dose_mib.from_pilot in load_campaign and parse_campaign_in), absolute: the
  /// campaign file's, made absolute against the working directory of the parse.
  /// store_plan keeps it, made absolute, as campaign_meta campaign_dir, so that `harness run DB`
  /// resolves them as the plan did. nullopt: not known (parse_campaign_in refuses relative paths).
  std::optional<std::string> base_dir;
  std::string yaml_text;        ///< the file's bytes (stored in the DB with the plan)
  std::string name;             ///< [A-Za-z0-9._-]+; prefix of every case id
  /// smoke | ci | pilot | confirmatory. Default: pilot when design.kind is pilot, else
  /// confirmatory. Only smoke and ci may use `pinned_commit: any` (PROTOCOL.md).
  std::string kind;
  std::uint64_t seed = 0;       ///< seeds the schedule order, the allocation and the workloads
  std::string pinned_commit;    ///< 40-hex commit (lowercase), "build" (resolve_build_pin) or "any" (smoke, ci only)

  int vcpus = 1;                ///< VM shape (study: 1 vCPU, 1 GiB)
  int memory_mib = 1024;

  std::string provider;         ///< provider.kind: the engine (harness/pool/README.md), e.g. "local-qemu" | "hosts"
  /// The engine's parsed `provider:` block (opaque here: harness/pool/engine.hpp): its VMs,
  /// provider.fresh_guest_per_case, provider.overcommit and the engine's own keys. Never
  /// null in a loaded campaign.
  std::shared_ptr<const pool::EngineConfig> engine;
  std::vector<std::string> vms; ///< strata VM names used by the design (design.vms, else the provider's)

  int warmup_s = 0, pressure_s = 0, recovery_s = 0;  ///< phase lengths (> 0)

  std::string cgroup_parent = "harness";
  std::int64_t bg_memory_max_mib = 0;  ///< the default of every regime (Regime::bg_memory_max_mib)
  std::optional<std::int64_t> bg_memory_high_mib, fg_memory_max_mib, fg_memory_low_mib;

  std::int64_t zram_disksize_mib = 0;
  std::string zram_algorithm;
  int zram_priority = 100;
  std::string swapfile_path;
  int swapfile_priority = 10;
  /// backend.delayed_swapfile: the swapfile in delayed-activation before the trigger
  /// (harness/case/spec/spec.hpp DelayedSwapfile; default active).
  harness::case_::DelayedSwapfile delayed_swapfile = harness::case_::DelayedSwapfile::Active;

  std::int64_t allocation_mib = 0;   ///< > bg_memory_max_mib (study); the default of every regime
  std::int64_t active_set_mib = 0;   ///< <= allocation_mib; the default of every regime

  std::vector<Regime> regimes;

  int canary_period_ms = 100;
  std::int64_t compute_hot_mib = 16;
  std::string sqlite_db_path;
  int sqlite_queries_per_request = 8;

  int trigger_window_ms = 1000;      ///< study: 1 s windows
  std::int64_t trigger_min_increase_us = 1000;  ///< study: >= 1 ms of `some` per window
  int trigger_consecutive_windows = 3;          ///< study: 3 in a row
  int telemetry_period_ms = 1000;
  int restoration_timeout_s = 120;

  /// The arms run (campaign_arms.hpp), in order: `configurations:` lists study arms (put in
  /// the study's order), `arms:` any arms (kept in the file's order).
  std::vector<Arm> arms;

  /// "matched-triplets" (matched blocks of the study's k = 3 arms) | "matched-blocks" (one case
  /// per arm, any k >= 2) | "pilot" | "ab-pairs"
  std::string design;
  int repeats = 1;                   ///< repeats per (vm, regime) stratum (when triplets_per_regime == 0)
  /// matched-triplets: triplets of each regime spread over `vms` by the seeded balanced
  /// allocation (allocation.hpp; study: 15 per regime over vm0..vm8). 0 = use `repeats`.
  int triplets_per_regime = 0;
  std::optional<std::int64_t> dose_mib;      ///< matched-triplets: the pinned dose (unset until resolved when from_pilot)
  /// design.dose_mib: {from_pilot: PATH}: the pilot DB whose rule chooses the dose at plan
  /// time (relative paths: to the campaign file's directory). Empty = dose_mib given.
  std::string dose_from_pilot;
  /// design.dose_mib.accept_differences (with from_pilot; ours): the settings in which this
  /// campaign may differ from its pilot DB's (pilot_match.hpp pilot_difference_names(), e.g.
  /// "cgroups.bg_memory_max_mib", "guest_kernel", "pilot_choice"); any other difference is
  /// refused at plan and run. In file order, no duplicates.
  std::vector<std::string> dose_accept_differences;
  /// `harness plan --pipeline-test-dose` (not a YAML key): the from_pilot dose is for a
  /// pipeline test, so a pilot DB whose cases ran under TCG is accepted (refused otherwise:
  /// the 1 s duration criterion is meaningless there). Recorded in the plan JSON
  /// (dose_from_pilot.pipeline_test) only when set, so other plans keep their hash.
  bool dose_pipeline_test = false;
  std::vector<std::int64_t> pilot_doses_mib; ///< pilot: candidate doses

  int max_infra_retries = 2;         ///< reruns of an infra_failed case (attempts = 1 + this)
  int case_timeout_s = 0;            ///< runner gives up on a case after this (0 = phases x 4 + 600)
  int poll_interval_ms = 1000;       ///< runner status poll period, ms
  /// How long the runner asks an agent to hold a status answer until the case's state or
  /// phase changes, ms (0 = plain polling every poll_interval_ms; at most 60000, the agent's
  /// limit, API.md). Ours: fewer requests, so less agent CPU charged to the case in the guest.
  int status_wait_ms = 10000;

  int bootstrap_replicates = 10000;  ///< analysis (ours; study: bootstrap intervals)
  double alpha = 0.05;
  /// The declared family of primary comparisons, canonical spelling (campaign_arms.hpp
  /// comparison_text): "compute:static-zram" (treatment bounded-reclaim, the study's) or
  /// "compute:senpai/static-zram". Default: the study's four.
  std::vector<std::string> comparisons;
  bool comparisons_declared = false;  ///< analysis.comparisons was given (else the default)

  double eligibility_max_duration_s = 1.0;  ///< pilot rule (study): reclaim write <= 1 s
  double eligibility_min_achieved_ratio = 0.8;  ///< pilot rule (study): achieved >= 80%
  /// `eligibility.restoration`, `eligibility.eagain`: how the pilot rule reads "valid
  /// restoration telemetry" and an EAGAIN write (analysis/data/pilot_reading.hpp; assumptions).
  analysis::PilotReading eligibility_reading;

  /// The `eligibility` object of the plan JSON and of the A/B comparison settings: the two
  /// thresholds, plus `restoration` and `eagain` only when the reading is not the default,
  /// so that a campaign without those keys keeps its plan hash.
  nlohmann::json eligibility_json() const {
    nlohmann::json j{{"max_duration_s", eligibility_max_duration_s},
                     {"min_achieved_ratio", eligibility_min_achieved_ratio}};
    if (!eligibility_reading.is_default()) {
      j["restoration"] = analysis::name_of(eligibility_reading.restoration);
      j["eagain"] = analysis::name_of(eligibility_reading.eagain);
    }
    return j;
  }

  std::vector<Assertion> assertions;  ///< ci: evaluated by `harness check`

  /// design ab-pairs: exactly two, baseline first then candidate. Each planned block is a
  /// pair (same vm, regime, repeat, configuration), one case per variant, in seeded order.
  std::vector<Variant> variants;
  /// design.aa (ab-pairs; default false): the campaign declares itself an A/A run, so that
  /// baseline and candidate booting the same kernel is accepted (ab_same_kernel.hpp; refused
  /// otherwise). Never enters the plan JSON, so plans keep their hash.
  bool design_aa = false;
  /// ab-pairs: family-wise alpha over the metrics that have a tolerance (Bonferroni: each
  /// interval at 1 - regression_alpha / m). Default 0.05 (as the study's primary analysis).
  double regression_alpha = 0.05;
  std::vector<Tolerance> tolerances;  ///< ab-pairs: per-metric tolerances (may be empty)
  /// regression.accept_insensitive (ab-pairs; default false): a `kind: ci` campaign is planned
  /// even when `harness plan --variance-from DB` finds that it cannot detect a change as large
  /// as a tolerance (plan_sensitivity.hpp); refused otherwise.
  bool regression_accept_insensitive = false;
  /// Set only by sequential_campaign() (check_sequential.hpp); nullopt for every other plan.
  std::optional<SequentialDesign> sequential;

  /// What the A/B comparison needs of this campaign (analysis/compare/regression.hpp
  /// compare_variants): file, design, seed, bootstrap_replicates, regression_alpha, tolerances.
  analysis::RegressionDesign regression_design() const {
    return {file, design, seed, bootstrap_replicates, regression_alpha, tolerances};
  }
};

/// Loads and validates a campaign file. Unknown keys are rejected. Throws CampaignError
/// whose message starts "FILE:LINE:COL: field a.b.c:" (1-based line, yaml-cpp Mark()).
Campaign load_campaign(const std::string& path);

/// Same, from text (`file` names it in errors; variants.*.kernel.image_dir resolves against
/// the folder of `file`; design.dose_mib.from_pilot is kept as written).
Campaign parse_campaign(const std::string& text, const std::string& file);

/// Same, from text whose relative paths (variants.*.kernel.image_dir,
/// design.dose_mib.from_pilot) resolve against `base_dir`, made absolute (load_campaign passes
/// the folder of the file). nullopt: the folder is not known, and a relative path is a
/// CampaignError naming its field and asking for the campaign FILE.
Campaign parse_campaign_in(const std::string& text, const std::string& file, const std::optional<std::string>& base_dir);

/// True when `kind` may use `pinned_commit: any` (smoke and ci; PROTOCOL.md).
bool allows_any_commit(const std::string& kind);

/// Replaces `pinned_commit: build` by `commit`, the commit of the harness build that plans
/// the campaign (the CLI passes its own build info), so the pin enters the plan and its
/// SHA-256. Throws CampaignError naming pinned_commit when `dirty` or `commit` is not 40
/// hex. Other values are left as they are. `preview`: the plan is only printed, never stored
/// (`harness plan FILE` without a DB), so a dirty build resolves to its commit too; the
/// caller says that such a plan cannot be stored.
void resolve_build_pin(Campaign& c, const std::string& commit, bool dirty, bool preview = false);

/// The names of `c.arms`, in order.
std::vector<std::string> arm_names(const Campaign& c);

}  // namespace harness::campaign
