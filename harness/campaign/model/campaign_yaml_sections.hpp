#pragma once
// The campaign loader's steps (campaign_yaml.cpp parse_campaign_text calls them in this
// order): one reader per top-level section of the campaign YAML, each filling its fields of
// the Campaign and failing with FILE:LINE:COL: field PATH: message (yaml::Section::fail).
// Each reader may rely on the fields the readers before it filled (the order of the file
// below). Internal to hk_campaign; the public entry points are campaign.hpp's.
//   campaign_yaml.cpp         name, kind, seed, pinned_commit, provider, runner; the commit pin
//   campaign_yaml_case.cpp    what every case runs: vm, phases_s, cgroups, backend, pressure,
//                             regimes, canaries, trigger
//   campaign_yaml_design.cpp  design (kind, vms, dose or doses, repeats)
//   campaign_yaml_judging.cpp analysis, eligibility, assertions
//   campaign_yaml_ab.cpp      variants and regression (design ab-pairs)
#include "harness/campaign/model/campaign.hpp"
#include "harness/yaml/strict_yaml.hpp"

#include <string>

namespace harness::campaign {

/// vm: {vcpus, memory_mib} (study: 1 vCPU, 1 GiB).
void read_vm_shape(yaml::Section& top, Campaign& c);

/// phases_s: {warmup, pressure, recovery} (s, each > 0).
void read_phases(yaml::Section& top, Campaign& c);

/// cgroups: {parent, bg_memory_max_mib (< vm.memory_mib), bg_memory_high_mib,
/// fg_memory_max_mib, fg_memory_low_mib}. Call after read_vm_shape.
void read_cgroups(yaml::Section& top, Campaign& c);

/// backend: {zram, swapfile (priority below zram's), delayed_swapfile}.
void read_backend(yaml::Section& top, Campaign& c);

/// pressure: {allocation_mib (> cgroups.bg_memory_max_mib), active_set_mib (<= allocation)}.
/// Call after read_cgroups.
void read_pressure(yaml::Section& top, Campaign& c);

/// regimes: a non-empty list of {name (unique), rate_mib_s (> 0), contents} and the pressure a
/// regime may declare (allocation_mib, active_set_mib, active_set_slide_mib_s, bg_memory_max_mib
/// or none; each absent = the campaign's). Call after read_vm_shape, read_cgroups, read_pressure.
void read_regimes(yaml::Section& top, Campaign& c);

/// canaries: {period_ms, compute_hot_mib, sqlite_db_path, sqlite_queries_per_request}.
void read_canaries(yaml::Section& top, Campaign& c);

/// trigger: {window_ms, min_increase_us, consecutive_windows} (study: 1 s, 1 ms, 3).
void read_trigger(yaml::Section& top, Campaign& c);

/// design: kind and what it takes (vms, dose_mib or its pilot, repeats or
/// triplets_per_regime, doses_mib). Call after the provider, cgroups and arms are read.
void read_design(yaml::Section& top, Campaign& c);

/// analysis: {bootstrap_replicates (enough for the comparisons' intervals), alpha,
/// comparisons}. Call after read_design and the arms.
void read_analysis(yaml::Section& top, Campaign& c);

/// eligibility: the pilot rule's settings {max_duration_s, min_achieved_ratio, restoration,
/// eagain}.
void read_eligibility(yaml::Section& top, Campaign& c);

/// assertions: a list of {kind, min or max as the kind needs} (assertions.hpp).
void read_assertions(yaml::Section& top, Campaign& c);

/// variants: {baseline, candidate} (design ab-pairs only; required there). Call after the
/// provider and read_design.
void read_ab_variants(yaml::Section& top, Campaign& c);

/// regression: {alpha, tolerances, accept_insensitive} (design ab-pairs only).
void read_ab_regression(yaml::Section& top, Campaign& c);

/// The message for a relative `path` when the campaign's folder is not known (a DB
/// planned by an earlier harness from a relative path).
std::string unknown_folder(const std::string& path);

}  // namespace harness::campaign
