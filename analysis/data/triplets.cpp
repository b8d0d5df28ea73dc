// Matched triplets (see triplets.hpp).
#include "analysis/data/triplets.hpp"

#include "analysis/data/campaign_settings.hpp"
#include "harness/error/expected.hpp"
#include "harness/text/join.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace analysis {

const std::vector<ComparisonDef>& TripletSet::family() const {
  return comparisons.empty() ? study_comparisons() : comparisons;
}

int TripletSet::arm_index(const std::string& name) const {
  for (std::size_t i = 0; i < arms.size(); ++i)
    if (arms[i] == name) return static_cast<int>(i);
  return -1;
}

namespace {

/// ts.comparisons, ts.arms (the DB's arms; built by hand, as in tests: the arms the cases, the
/// schedule and the family name) and ts.unit ("triplet" or "block" in the warnings).
void set_arms_and_unit(const CampaignData& data, TripletSet& ts) {
  ts.comparisons = data.comparisons.empty() ? study_comparisons() : data.comparisons;
  if (!data.arms.empty()) {
    for (const auto& a : data.arms) ts.arms.push_back(a.name);
  } else {
    std::vector<std::string> configurations;
    for (const auto& c : data.cases) configurations.push_back(c.configuration);
    for (const auto& s : data.schedule) configurations.push_back(s.configuration);
    ts.arms = default_arm_names(configurations, ts.comparisons);
  }
  ts.unit = block_word(read_campaign_settings(data.meta).design_kind, ts.arms.size());
}

/// Puts each member case into its arm's slot of t.cases; the Problem: a case of no arm, or two
/// cases of one arm.
harness::Checked place_members(const TripletSet& ts, const std::vector<const CaseSummary*>& members, Triplet& t) {
  for (const CaseSummary* c : members) {
    const int a = ts.arm_index(c->configuration);
    if (a < 0)
      return harness::problem(fmt::format("case {} has configuration {}, which is not an arm of the campaign",
                                          c->case_id, c->configuration));
    auto& slot = t.cases[static_cast<std::size_t>(a)];
    if (slot)
      return harness::problem(fmt::format("two cases for {} ({} and {})", c->configuration, slot->case_id, c->case_id));
    slot = c;
  }
  return {};
}

/// The block's members that never ran (empty never_run when none did not), each with what the
/// schedule says of it; vm and regime from the schedule, then from the members that ran.
IncompleteTriplet missing_members(const CampaignData& data, const TripletSet& ts, const Triplet& t,
                                  const std::vector<const CaseSummary*>& members,
                                  const std::vector<const ScheduledCase*>& planned) {
  IncompleteTriplet inc;
  inc.id = t.id;
  for (std::size_t k = 0; k < ts.arms.size(); ++k) {
    if (t.cases[k]) continue;
    const std::string& conf = ts.arms[k];
    std::string what = fmt::format("{} (no case record, not in the schedule)", conf);
    for (const ScheduledCase* s : planned)
      if (s->configuration == conf) {
        inc.vm = s->vm;
        inc.regime = s->regime;
        what = fmt::format("{} ({}: {})", conf, s->case_id,
                           std::find(data.infra_failed.begin(), data.infra_failed.end(), s->case_id) !=
                                   data.infra_failed.end()
                               ? std::string("infra_failed")
                               : s->state);
      }
    inc.never_run.push_back(what);
  }
  if (!inc.never_run.empty())
    for (const CaseSummary* c : members) {
      inc.vm = c->vm;
      inc.regime = c->regime;
    }
  return inc;
}

/// Sets t.vm and t.regime from the first member; the Problem, a recording error that keeps the
/// complete block out of the paired analysis: an unusable case, a member of another stratum, a
/// canary without pressure-phase requests or without a positive finite p99.
harness::Checked check_recording(const std::string& unit, Triplet& t) {
  t.vm = t.cases[0]->vm;
  t.regime = t.cases[0]->regime;
  for (const CaseSummary* c : t.cases) {
    if (!c->usable) return harness::problem(fmt::format("case {} unusable ({})", c->case_id, c->excluded_because));
    if (c->vm != t.vm || c->regime != t.regime)
      return harness::problem(fmt::format("case {} has vm/regime {}/{} but the {} has {}/{}", c->case_id, c->vm,
                                          c->regime, unit, t.vm, t.regime));
    for (Canary k : {Canary::Compute, Canary::Sqlite}) {
      const auto& l = c->latency[static_cast<int>(k)];
      if (!l)
        return harness::problem(
            fmt::format("case {} has no {} requests in the pressure phase", c->case_id, canary_name(k)));
      if (!(l->p99_us > 0.0) || !std::isfinite(l->p99_us))
        return harness::problem(fmt::format("case {} {} p99 = {} us is not a positive finite number: log ratio undefined",
                                            c->case_id, canary_name(k), l->p99_us));
    }
  }
  return {};
}

/// The blocks in stratum order (strata numbered in name order) and the warnings about strata
/// with one block.
void number_strata(std::map<std::string, std::vector<Triplet>>& by_stratum, TripletSet& ts) {
  int s = 0;
  std::vector<std::string> singles;
  for (auto& [name, list] : by_stratum) {
    ts.strata.push_back(name);
    if (list.size() == 1) singles.push_back(name);
    for (auto& t : list) {
      t.stratum = s;
      ts.triplets.push_back(t);
    }
    ++s;
  }
  if (!singles.empty()) {
    const std::string names = harness::text::join(singles);
    ts.warnings.push_back(fmt::format(
        "{} of {} strata have one {} ({}): such a stratum has no resampling variability, so intervals understate "
        "uncertainty",
        singles.size(), ts.strata.size(), ts.unit, names));
    if (singles.size() == ts.strata.size())
      ts.warnings.push_back(
          fmt::format("EVERY stratum has one {}: the bootstrap intervals have zero width and the verdict's interval "
                      "criteria carry no information about uncertainty",
                      ts.unit));
  }
  if (ts.strata.size() == 1)
    ts.warnings.push_back("only one (vm, regime) stratum: the estimate describes that stratum alone");
}

}  // namespace

TripletSet build_triplets(const CampaignData& data) {
  TripletSet ts;
  set_arms_and_unit(data, ts);
  const std::string& unit = ts.unit;
  std::map<std::string, std::vector<const CaseSummary*>> groups;
  for (const auto& c : data.cases)
    if (!c.triplet_id.empty()) groups[c.triplet_id].push_back(&c);
  std::map<std::string, std::vector<const ScheduledCase*>> planned;
  for (const auto& s : data.schedule)
    if (!s.triplet_id.empty()) {
      planned[s.triplet_id].push_back(&s);
      groups[s.triplet_id];  // a triplet none of whose members ran is incomplete too
    }
  if (groups.empty() && !data.cases.empty())
    ts.warnings.push_back("no completed case has a triplet_id (a pilot DB? use `harness pilot-select`)");
  std::map<std::string, std::vector<Triplet>> by_stratum;
  for (auto& [id, members] : groups) {
    Triplet t;
    t.id = id;
    t.cases.assign(ts.arms.size(), nullptr);
    harness::Checked usable = place_members(ts, members, t);
    if (usable) {
      IncompleteTriplet inc = missing_members(data, ts, t, members, planned[id]);
      if (!inc.never_run.empty()) {
        ts.warnings.push_back(
            fmt::format("{} {} incomplete (a member never ran): {}", unit, id, harness::text::join(inc.never_run)));
        ts.incomplete.push_back(std::move(inc));
        continue;
      }
      usable = check_recording(unit, t);
    }
    if (!usable) {
      const std::string& problem = usable.error().message;
      ts.excluded.push_back(fmt::format("{} {}: {}", unit, id, problem));
      ts.warnings.push_back(fmt::format("{} {} excluded from the paired analysis for a recording error: {}", unit, id, problem));
      continue;
    }
    by_stratum[t.vm + "/" + t.regime].push_back(t);
  }
  number_strata(by_stratum, ts);
  return ts;
}

TripletSet without_lost_cases(const TripletSet& ts) {
  TripletSet out;
  out.arms = ts.arms;
  out.comparisons = ts.comparisons;
  out.incomplete = ts.incomplete;
  out.excluded = ts.excluded;
  std::map<int, int> renumber;
  for (const auto& t : ts.triplets) {
    if (std::any_of(t.cases.begin(), t.cases.end(), [](const CaseSummary* c) { return c->lost(); })) continue;
    if (!renumber.count(t.stratum)) {
      renumber[t.stratum] = static_cast<int>(out.strata.size());
      out.strata.push_back(ts.strata[static_cast<std::size_t>(t.stratum)]);
    }
    Triplet k = t;
    k.stratum = renumber[t.stratum];
    out.triplets.push_back(k);
  }
  return out;
}

namespace {
// (treatment, comparator) arm positions of every comparison of ts.
std::vector<std::pair<int, int>> comparison_arms(const TripletSet& ts) {
  std::vector<std::pair<int, int>> v;
  for (const auto& d : ts.family()) {
    const int t = ts.arm_index(d.treatment), c = ts.arm_index(d.comparator);
    for (const auto& [pos, name] : {std::pair<int, const std::string*>{t, &d.treatment}, {c, &d.comparator}})
      if (pos < 0) {
        const std::string arms = harness::text::join(ts.arms);
        throw std::invalid_argument(fmt::format(
            "comparison {} names arm {}, which the campaign does not have (arms: {})", d.label, *name, arms));
      }
    v.emplace_back(t, c);
  }
  return v;
}
}  // namespace

Eigen::MatrixXd log_ratio_matrix(const TripletSet& ts) {
  const auto& defs = ts.family();
  const auto arms = comparison_arms(ts);
  const auto m_cols = static_cast<Eigen::Index>(defs.size());
  Eigen::MatrixXd m(static_cast<Eigen::Index>(ts.triplets.size()), m_cols);
  for (std::size_t i = 0; i < ts.triplets.size(); ++i) {
    const auto& t = ts.triplets[i];
    for (std::size_t j = 0; j < defs.size(); ++j) {
      const int k = static_cast<int>(defs[j].canary);
      const double r = t.cases[static_cast<std::size_t>(arms[j].first)]->latency[k]->p99_us;
      const double c = t.cases[static_cast<std::size_t>(arms[j].second)]->latency[k]->p99_us;
      m(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = std::log(r / c);
    }
  }
  return m;
}

Eigen::MatrixXd abs_diff_matrix(const TripletSet& ts) {
  const auto& defs = ts.family();
  const auto arms = comparison_arms(ts);
  Eigen::MatrixXd m(static_cast<Eigen::Index>(ts.triplets.size()), static_cast<Eigen::Index>(2 * defs.size()));
  for (std::size_t i = 0; i < ts.triplets.size(); ++i) {
    const auto& t = ts.triplets[i];
    for (std::size_t j = 0; j < defs.size(); ++j) {
      const int k = static_cast<int>(defs[j].canary);
      const auto& r = *t.cases[static_cast<std::size_t>(arms[j].first)]->latency[k];
      const auto& c = *t.cases[static_cast<std::size_t>(arms[j].second)]->latency[k];
      const auto col = static_cast<Eigen::Index>(2 * j);
      m(static_cast<Eigen::Index>(i), col) = r.p95_us - c.p95_us;
      m(static_cast<Eigen::Index>(i), col + 1) = r.p99_us - c.p99_us;
    }
  }
  return m;
}

std::vector<int> stratum_labels(const TripletSet& ts) {
  std::vector<int> v;
  v.reserve(ts.triplets.size());
  for (const auto& t : ts.triplets) v.push_back(t.stratum);
  return v;
}

bool is_family_treatment(const TripletSet& ts, const std::string& arm) {
  const auto& f = ts.family();
  return std::any_of(f.begin(), f.end(), [&](const ComparisonDef& c) { return c.treatment == arm; });
}

std::vector<const CaseSummary*> triplet_cases(const TripletSet& ts) {
  std::vector<const CaseSummary*> v;
  for (const auto& t : ts.triplets)
    for (const auto* c : t.cases) v.push_back(c);
  return v;
}

}  // namespace analysis
