// The campaign's `design:` section (campaign_yaml_sections.hpp read_design): its kind and
// what each kind takes. Rules: the study, docs/PROTOCOL.md, docs/CAMPAIGN.md "design".
#include "harness/campaign/model/campaign_yaml_sections.hpp"

#include "harness/campaign/model/campaign_arms.hpp"
#include "harness/campaign/model/dose.hpp"
#include "harness/campaign/model/pilot_settings.hpp"
#include "harness/text/join.hpp"

#include <algorithm>
#include <set>

namespace harness::campaign {

namespace {

using yaml::Section;
using yaml::check_name;
using yaml::positive_int;

/// design.dose_mib.accept_differences (optional, with from_pilot): a list of the names of
/// pilot_settings.hpp pilot_difference_names(), each once.
void accept_differences(Section& p, Campaign& c) {
  YAML::Node a = p.get("accept_differences", false);
  if (!a) return;
  const auto& known = pilot_difference_names();
  const std::string list = text::join(known);
  if (!a.IsSequence()) p.fail(a, p.field("accept_differences"), "expected a list of settings (any of " + list + ")");
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string f = p.field("accept_differences") + "[" + std::to_string(i) + "]";
    const auto v = p.as<std::string>(a[i], f);
    if (std::find(known.begin(), known.end(), v) == known.end())
      p.fail(a[i], f, "'" + v + "' is not a setting compared with the pilot (one of " + list + ")");
    if (std::find(c.dose_accept_differences.begin(), c.dose_accept_differences.end(), v) != c.dose_accept_differences.end())
      p.fail(a[i], f, "'" + v + "' is listed twice");
    c.dose_accept_differences.push_back(v);
  }
}

/// design.vms (optional): the VMs the design uses, which must be the provider's VMs
/// (the engine may fix their number: EngineConfig::check_vm_count).
void design_vms(Section& s, Campaign& c) {
  YAML::Node v = s.get("vms", false);
  if (!v) return;  // the provider's VMs
  if (!v.IsSequence() || v.size() == 0) s.fail(v, s.field("vms"), "expected a non-empty list of VM names");
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string f = s.field("vms") + "[" + std::to_string(i) + "]";
    const auto n = s.as<std::string>(v[i], f);
    check_name(s, v[i], f, n, "[A-Za-z0-9_-]{1,32}");
    if (!seen.insert(n).second) s.fail(v[i], f, "duplicate VM '" + n + "'");
    names.push_back(n);
  }
  if (const auto why = c.engine->check_vm_count(names.size()); !why) s.fail(v, s.field("vms"), why.error().message);
  const std::set<std::string> provided(c.vms.begin(), c.vms.end());
  for (std::size_t i = 0; i < names.size(); ++i)
    if (!provided.count(names[i]))
      s.fail(v[i], s.field("vms") + "[" + std::to_string(i) + "]",
             "'" + names[i] + "' is not a VM of the provider (" + c.engine->vm_names_source() + ")");
  if (names.size() != provided.size())
    s.fail(v, s.field("vms"), "must list every VM of provider.vms (" + std::to_string(provided.size()) + ")");
  c.vms = names;
}

/// design.dose_mib: a number (MiB, checked against the study arm's rule) or
/// {from_pilot, accept_differences}; required when needs_design_dose.
void design_dose(Section& s, Campaign& c) {
  YAML::Node d = s.get("dose_mib", needs_design_dose(c));
  if (!d) return;
  if (d.IsMap()) {
    Section p(d, s.field("dose_mib"), s.file());
    c.dose_from_pilot = p.scalar<std::string>("from_pilot");
    if (c.dose_from_pilot.empty()) p.fail(d["from_pilot"], p.field("from_pilot"), "must name the pilot DB");
    accept_differences(p, c);
    p.finish();
  } else {
    c.dose_mib = positive_int(s, "dose_mib");
    // The study arm's rule for its dose (dose.hpp: bounded-reclaim's settings_check, below the bg limit).
    if (auto why = check_design_dose(c, dose_bytes(*c.dose_mib)); !why)
      s.fail(s.node()["dose_mib"], s.field("dose_mib"), why.error().message);
  }
}

/// matched-triplets and matched-blocks: triplets_per_regime (the study's) or repeats, then
/// the dose.
void matched_design(Section& s, Campaign& c) {
  const bool rep = s.has("repeats"), tpr = s.has("triplets_per_regime");
  if (rep && tpr)
    s.fail(s.node()["triplets_per_regime"], s.field("triplets_per_regime"),
           "give either triplets_per_regime (spread over design.vms, the study's design) or repeats (per "
           "(vm, regime) stratum), not both");
  if (!rep && !tpr)
    s.fail_missing({"triplets_per_regime", "repeats"}, "triplets_per_regime",
                   "missing (required): give triplets_per_regime (the study's design: 15) or repeats");
  if (tpr) c.triplets_per_regime = static_cast<int>(positive_int(s, "triplets_per_regime"));
  else c.repeats = static_cast<int>(positive_int(s, "repeats"));
  design_dose(s, c);
}

/// pilot: doses_mib (a non-empty list of distinct doses below the bg limit) and repeats.
void pilot_design(Section& s, Campaign& c) {
  YAML::Node d = s.get("doses_mib", true);
  if (!d.IsSequence() || d.size() == 0) s.fail(d, s.field("doses_mib"), "expected a non-empty list");
  for (std::size_t i = 0; i < d.size(); ++i) {
    const std::string f = s.field("doses_mib") + "[" + std::to_string(i) + "]";
    const auto v = s.as<std::int64_t>(d[i], f);
    if (v <= 0) s.fail(d[i], f, "must be > 0 and below cgroups.bg_memory_max_mib");
    for (const auto& g : c.regimes)  // the study's rule for its dose, in every regime's bg limit
      if (g.bg_memory_max_mib && v >= *g.bg_memory_max_mib)
        s.fail(d[i], f, "must be > 0 and below " + bg_limit_field(c, g) + " (" + std::to_string(*g.bg_memory_max_mib) + " MiB)");
    if (std::find(c.pilot_doses_mib.begin(), c.pilot_doses_mib.end(), v) != c.pilot_doses_mib.end())
      s.fail(d[i], f, "duplicate dose");
    c.pilot_doses_mib.push_back(v);
  }
  c.repeats = static_cast<int>(positive_int(s, "repeats", 1));
}

}  // namespace

void read_design(Section& top, Campaign& c) {
  Section s = top.child("design");
  c.design = s.scalar<std::string>("kind");
  design_vms(s, c);
  if (c.design == "ab-pairs") {
    // Pairs per (vm, regime, configuration): one case per variant each.
    c.repeats = static_cast<int>(positive_int(s, "repeats", 1));
    c.design_aa = s.scalar<bool>("aa", false);  // ab_same_kernel.hpp
    design_dose(s, c);
  } else if (c.design == "matched-triplets" || c.design == "matched-blocks") {
    matched_design(s, c);
  } else if (c.design == "pilot") {
    pilot_design(s, c);
  } else {
    s.fail(s.node()["kind"], s.field("kind"),
           "'" + c.design + "' is not one of matched-triplets, matched-blocks, pilot, ab-pairs");
  }
  s.finish();
}

}  // namespace harness::campaign
