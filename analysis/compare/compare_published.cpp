// One campaign beside the study's published results (see compare_published.hpp).
#include "analysis/compare/compare_published.hpp"

#include "analysis/data/arms.hpp"

#include "analysis/compare/compare.hpp"
#include "analysis/compare/setting_differences.hpp"
#include "analysis/data/study_facts.hpp"
#include "analysis/data/triplets.hpp"
#include "analysis/tables/verdict.hpp"
#include "harness/text/join.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

namespace analysis {
namespace {

using nlohmann::json;

const char* const kBelow = "below 1 (favours bounded reclaim)";
const char* const kBelowOwn = "below 1 (favours the treatment)";
const char* const kContains = "contains 1 (no clear difference)";
const char* const kAbove = "above 1 (harm)";
const char* const kNotAssessable = "not assessable";
// A comparison or arm of this campaign that the study does not have.
const char* const kNotPartOfStudy = "not part of the study";
// A study arm this campaign does not have.
const char* const kNotInCampaign = "not in this campaign";

/// Where the interval lies. `below` names who a ratio below 1 favours: the study's comparisons
/// favour bounded reclaim, a campaign's own comparison its own treatment.
std::string finding(double lower, double upper, const char* below = kBelow) {
  if (upper < 1.0) return below;
  if (lower > 1.0) return kAbove;
  return kContains;
}

std::string yes_no(bool b) { return b ? "yes" : "no"; }

/// Text of a cell (numbers as the table's decimals would print them, null as "n/a").
std::string cell_text(const json& c) {
  if (c.is_null()) return "n/a";
  if (c.is_string()) return c.get<std::string>();
  if (c.is_number_integer()) return std::to_string(c.get<long long>());
  return fmt::format("{:g}", c.get<double>());
}

/// Table 1's value of `setting` ("" when the campaign does not hold it constant).
std::string table1_value(const Table& t1, const std::string& setting) {
  const auto si = column_index(t1, "setting"), vi = column_index(t1, "value");
  for (const auto& row : t1.rows)
    if (row[si].is_string() && row[si].get<std::string>() == setting) return cell_text(row[vi]);
  return "";
}

/// The study's PSI stall medians beside this campaign's bg, fg and system stall medians (the
/// mechanism table's columns), per study arm and PSI state. The study does not say whose PSI it
/// reports (study_facts.hpp), so none of the three is singled out.
Table published_stall(const CompareSide& ours) {
  Table t{"published_stall",
          "PSI memory stall medians: the study's (owner not stated) beside this campaign's bg, fg and system",
          {{"configuration", 0}, {"PSI state", 0, "state"}, {"study (s), owner not stated", 3, "study_s"},
           {"this campaign bg (s)", 3, "bg_s"}, {"this campaign fg (s)", 3, "fg_s"},
           {"this campaign system (s)", 3, "system_s"}},
          {},
          {}};
  for (std::size_t i = 0; i < kStudyArmCount; ++i) {
    const std::string arm = kStudyArms[i].name;
    const auto it = ours.mechanism.find(arm);
    auto value = [&](const std::string& quantity) -> json {
      if (it == ours.mechanism.end()) return json(kNotInCampaign);
      const auto q = it->second.find(quantity);
      return q == it->second.end() || !q->second ? json(nullptr) : num(*q->second);
    };
    for (const auto& [state, study] : {std::pair{"some", kStudyMechanism[i].some_s}, {"full", kStudyMechanism[i].full_s}})
      t.add({arm, state, num(study), value(fmt::format("bg_psi_{}_stall_s", state)),
             value(fmt::format("fg_psi_{}_stall_s", state)), value(fmt::format("system_psi_{}_stall_s", state))});
  }
  t.notes.push_back(
      "The study: \"Median accumulated some stall time and full stall time were 1.342 s and 1.114 s with bounded "
      "reclaim, 1.515 s and 1.306 s with delayed activation, and 1.818 s and 1.730 s with static zram\"; it does not "
      "say whether these are the background group's, the foreground group's or the whole system's memory PSI (its "
      "trigger reads the background group's). This campaign's medians over its measured cases of the pressure-phase "
      "stall: bg and fg memory.pressure, system /proc/pressure/memory (mechanism table). Conjecture, not the study's "
      "word: its full below its some fits a group holding more than one task at times; here bg holds one task, so "
      "bg full equals bg some whenever it stalls. n/a = not sampled. Stall times are inflated under TCG.");
  return t;
}

std::string verdict_words(bool general_benefit, const std::vector<std::string>& harm) {
  std::string s = general_benefit ? "general responsiveness benefit" : "no general responsiveness benefit";
  if (harm.empty()) return s + ", no harm detected";
  s += ", harm in";
  for (std::size_t i = 0; i < harm.size(); ++i) s += (i ? ", " : " ") + harm[i];
  return s;
}

/// (configuration, canary) -> row of Table 5; (regime, configuration) -> row of Table 6.
struct Cells {
  std::map<std::pair<std::string, std::string>, const std::vector<json>*> rows;
};

Cells index(const Table& t, const std::string& k1, const std::string& k2) {
  Cells c;
  const auto a = column_index(t, k1), b = column_index(t, k2);
  for (const auto& row : t.rows)
    if (row[a].is_string() && row[b].is_string()) c.rows[{row[a].get<std::string>(), row[b].get<std::string>()}] = &row;
  return c;
}

std::optional<double> cell(const Cells& c, const Table& t, const std::string& k1, const std::string& k2,
                           const std::string& column) {
  const auto it = c.rows.find({k1, k2});
  if (it == c.rows.end()) return std::nullopt;
  return cell_number((*it->second)[column_index(t, column)]);
}

/// The study's arms (study_facts.hpp): its findings are judged on the arms carrying its names,
/// whatever other arms the campaign has.
const std::vector<std::string>& configs() {
  static const std::vector<std::string> c = [] {
    std::vector<std::string> v;
    for (const auto& a : kStudyArms) v.push_back(a.name);
    return v;
  }();
  return c;
}

/// The study arm with the largest (or smallest) value, when all three are measured.
std::optional<std::string> extreme(const std::map<std::string, std::optional<double>>& v, bool largest) {
  std::optional<std::string> best;
  for (const auto& c : configs()) {
    const auto it = v.find(c);
    if (it == v.end() || !it->second) return std::nullopt;
    if (!best || (largest ? *it->second > *v.at(*best) : *it->second < *v.at(*best))) best = c;
  }
  return best;
}

std::string ms_text(std::optional<double> v) { return v ? fmt::format("{:.2f} ms", *v) : "n/a"; }

/// What the campaign's report says of its own shape (Report::extra, provenance).
struct CampaignShape {
  bool assessable = false;        ///< verdict.assessable: some stratum has more than one block
  double level = 0;               ///< the simultaneous interval level
  std::vector<int> sizes;         ///< blocks per (vm, regime) stratum, ascending
  std::set<std::string> vms, regimes;
  int triplets = 0;               ///< blocks of k arms (the study: triplets of its three)
  std::string unit;               ///< "triplet" or the design's block name
  std::size_t k_arms = kStudyArmCount;
  std::string accelerators;       ///< joined, "" when not recorded
};

CampaignShape shape_of(const Report& ours) {
  CampaignShape c;
  const json& extra = ours.extra;
  c.assessable = extra.contains("verdict") && extra["verdict"].value("assessable", false);
  c.level = extra.value("level", 0.0);
  c.sizes = extra.value("stratum_sizes", std::vector<int>{});
  std::sort(c.sizes.begin(), c.sizes.end());
  for (const auto& s : extra.value("strata", std::vector<std::string>{})) {
    const auto slash = s.find('/');
    c.vms.insert(s.substr(0, slash));
    if (slash != std::string::npos) c.regimes.insert(s.substr(slash + 1));
  }
  for (int n : c.sizes) c.triplets += n;
  c.unit = extra.value("unit", std::string("triplet"));
  c.k_arms = extra.contains("arms") && extra["arms"].is_array() ? extra["arms"].size() : kStudyArmCount;
  c.accelerators = ours.provenance ? harness::text::join(ours.provenance->accelerators) : "";
  return c;
}

/// The warnings that hold before any number is read: not assessable, TCG.
void shape_warnings(const CampaignShape& c, Report& r) {
  if (!c.assessable)
    r.warnings.push_back(
        fmt::format("NOT ASSESSABLE: every (vm, regime) stratum of this campaign has one matched {0}, so its intervals "
                    "have zero width and say nothing about uncertainty. No finding of the study is reproduced or "
                    "contradicted here (every judgement below reads \"not assessable\"); the numbers are shown for the "
                    "mechanism only. Run a campaign with several {0}s per stratum (campaigns/confirmatory.yaml) to "
                    "compare with the study.",
                    c.unit));
  if (c.accelerators.find("tcg") != std::string::npos)
    r.warnings.push_back("This campaign ran under TCG (software emulation): its latencies are inflated and its ratios "
                         "are not timing evidence; the study ran on VMs.");
}

/// Rows of the setting table (setting_differences.hpp): every setting the study states beside
/// this campaign's; "differs" is the study's rule per setting.
std::vector<SettingRow> study_setting_rows(const Table& t1, const CampaignShape& c) {
  std::vector<SettingRow> rows;
  auto setting = [&](const std::string& name, const std::string& study, const std::string& mine, bool differs) {
    rows.push_back({name, {study, mine.empty() ? std::string("not constant / not recorded") : mine}, differs});
  };
  const std::string vcpus = table1_value(t1, "vm_shape.vcpus"), mem = table1_value(t1, "vm_shape.memory_mib");
  setting("VM shape", "1 vCPU, 1024 MiB", vcpus.empty() ? "" : vcpus + " vCPU, " + mem + " MiB",
          vcpus != "1" || mem != "1024");
  setting("VMs", "9 (vm0 through vm8)", std::to_string(c.vms.size()), c.vms.size() != 9);
  setting("pressure regimes", "4 (2 rates x 2 contents)", std::to_string(c.regimes.size()), c.regimes.size() != 4);
  setting("matched triplets", fmt::format("{} ({} cases)", kStudyTriplets, kStudyTriplets * kStudyArmCount),
          c.k_arms == kStudyArmCount
              ? std::to_string(c.triplets)
              : fmt::format("{} blocks of {} arms ({} cases)", c.triplets, c.k_arms, c.triplets * c.k_arms),
          c.triplets != kStudyTriplets || c.k_arms != kStudyArmCount);
  const auto& sizes = c.sizes;
  const std::string per = sizes.empty() ? "" : fmt::format("{} / {} / {} over {} strata", sizes.front(),
                                                           sizes[sizes.size() / 2], sizes.back(), sizes.size());
  setting(c.unit + "s per (vm, regime) stratum, min / median / max",
          "15 per regime over 9 VMs: 1 / 2 / 2 over 36 strata (the balanced allocation, an assumption: the text "
          "gives only the totals)",
          per, sizes.size() != 36 || sizes.front() != 1 || sizes.back() != 2 || c.triplets != kStudyTriplets);
  const std::string w = table1_value(t1, "phases_s.warmup"), p = table1_value(t1, "phases_s.pressure"),
                    rc = table1_value(t1, "phases_s.recovery");
  setting("phases warmup / pressure / recovery", "120 / 300 / 120 s", w.empty() ? "" : w + " / " + p + " / " + rc + " s",
          w != "120" || p != "300" || rc != "120");
  const std::string period = table1_value(t1, "canaries.period_ms");
  setting("canary period", "100 ms", period.empty() ? "" : period + " ms", period != "100");
  const std::string tw = table1_value(t1, "trigger.window_ms"), ti = table1_value(t1, "trigger.min_increase_us"),
                    tc = table1_value(t1, "trigger.consecutive_windows");
  setting("trigger", "bg PSI some +>= 1000 us in each of 3 consecutive 1000 ms windows",
          tw.empty() ? "" : "bg PSI some +>= " + ti + " us in each of " + tc + " consecutive " + tw + " ms windows",
          tw != "1000" || ti != "1000" || tc != "3");
  const std::string dose = table1_value(t1, "bounded-reclaim dose, memory.reclaim write (MiB)");
  setting("bounded-reclaim dose", "96 MiB (chosen by the pilot)", dose.empty() ? "" : dose + " MiB", dose != "96");
  setting("accelerator", "VMs (the text names no hypervisor)", c.accelerators,
          c.accelerators.empty() || c.accelerators.find("tcg") != std::string::npos);
  setting("simultaneous interval level", "98.75% (0.05 over 4 comparisons)",
          c.level > 0 ? fmt::format("{:.2f}%", c.level * 100) : "", std::abs(c.level - 0.9875) > 1e-9);
  return rows;
}

/// published_setting from `rows`; the differences from the study's setting become one warning
/// of `r` and are returned.
Table setting_beside_study(const std::vector<SettingRow>& rows, std::vector<std::string>& differences, Report& r) {
  Table st = setting_table("published_setting", "The study's setting and this campaign's", {"study", "this campaign"},
                           rows);
  differences = difference_texts({"study", "this"}, rows);
  st.notes.push_back("The study's values are those its text states (campaigns/README.md Table 1 lists which settings "
                     "it leaves unstated: bg limit, allocation, rates, zram size). \"differs\" is yes wherever this "
                     "campaign's value is not the study's or is not recorded.");
  if (!differences.empty()) {
    std::string s = "This campaign differs from the study's setting in " + std::to_string(differences.size()) + ": ";
    s += harness::text::join(differences, "; ");
    r.warnings.push_back(s + ". Read every judgement below with these in mind.");
  }
  return st;
}

/// published_table4 and what it finds: per study comparison, this campaign's interval.
struct Table4Findings {
  Table t;
  json reproduced = json::array();     ///< extra.reproduced
  int n_reproduced = 0, n_compared = 0;
  std::array<RatioInterval, kStudyComparisonCount> mine{};  ///< this campaign's intervals of the study's four
};

/// The columns of Table 4 in table4_primary ("analysis": "primary" rows; the others are
/// sensitivity analyses).
struct Table4Columns {
  std::size_t comparison, triplets, ratio, lower, upper, analysis;
};

/// published_table4, empty.
Table published_table4_frame() {
  return Table{"published_table4",
               "Table 4 beside the study's: p99 response-time ratio, bounded reclaim / comparator, and whether the "
               "study's finding is reproduced",
               {{"comparison", 0},
                {"study ratio", 3, "study_ratio"},
                {"study lower", 3, "study_ratio_lower"},
                {"study upper", 3, "study_ratio_upper"},
                {"study finding", 0, "study_finding"},
                {"this triplets", 0, "this_triplets"},
                {"this ratio", 3, "this_ratio"},
                {"this lower", 3, "this_ratio_lower"},
                {"this upper", 3, "this_ratio_upper"},
                {"this finding", 0, "this_finding"},
                {"same direction", 0, "same_direction"},
                {"this / study", 3, "ratio_this_over_study"},
                {"intervals overlap", 0, "intervals_overlap"},
                {"finding reproduced", 0, "finding_reproduced"}},
               {},
               {}};
}

/// The row of the study's comparison `j` (kStudyTable4 order) beside this campaign's primary
/// row of that comparison, or "not in this campaign".
void add_study_comparison(std::size_t j, const Table& t4, const Table4Columns& k, bool assessable, Table4Findings& f) {
  const auto& defs = study_comparisons();
  const auto& study = kStudyTable4[j];
  const std::vector<json>* row = nullptr;
  for (const auto& x : t4.rows)
    if (x[k.comparison].is_string() && x[k.comparison].get<std::string>() == defs[j].label && x[k.analysis] == "primary")
      row = &x;
  const std::string sf = finding(study.lower, study.upper);
  if (!row) {
    f.t.add({defs[j].label, num(study.estimate), num(study.lower), num(study.upper), sf, nullptr, nullptr, nullptr,
             nullptr, kNotInCampaign, nullptr, nullptr, nullptr, kNotAssessable});
    f.reproduced.push_back({{"comparison", defs[j].label}, {"study_finding", sf}, {"reproduced", nullptr}});
    return;
  }
  const double e = (*row)[k.ratio].get<double>(), lo = (*row)[k.lower].get<double>(), up = (*row)[k.upper].get<double>();
  f.mine[j] = {defs[j].label, e, lo, up};
  const std::string tf = assessable ? finding(lo, up) : kNotAssessable;
  const bool same_dir = (e < 1) == (study.estimate < 1) && (e > 1) == (study.estimate > 1);
  const bool overlap = lo <= study.upper && study.lower <= up;
  const json rep = assessable ? json(tf == sf) : json(nullptr);
  if (assessable) {
    ++f.n_compared;
    f.n_reproduced += tf == sf;
  }
  f.t.add({defs[j].label, num(study.estimate), num(study.lower), num(study.upper), sf, (*row)[k.triplets], num(e),
           num(lo), num(up), tf, yes_no(same_dir), num(e / study.estimate),
           assessable ? yes_no(overlap) : std::string("not assessable (zero-width interval)"),
           assessable ? yes_no(tf == sf) : std::string(kNotAssessable)});
  f.reproduced.push_back({{"comparison", defs[j].label}, {"study_finding", sf}, {"this_finding", tf}, {"reproduced", rep}});
}

/// This campaign's other comparisons (a declared family): listed, never judged against the study.
void add_own_comparisons(const Table& t4, const Table4Columns& k, bool assessable, Table& t) {
  const auto& defs = study_comparisons();
  for (const auto& x : t4.rows) {
    if (!x[k.comparison].is_string() || x[k.analysis] != "primary") continue;
    const std::string label = x[k.comparison].get<std::string>();
    if (std::any_of(defs.begin(), defs.end(), [&](const ComparisonDef& d) { return d.label == label; })) continue;
    if (std::any_of(t.rows.begin(), t.rows.end(), [&](const std::vector<json>& r) { return r[0] == label; })) continue;
    const double e = x[k.ratio].get<double>(), lo = x[k.lower].get<double>(), up = x[k.upper].get<double>();
    t.add({label, nullptr, nullptr, nullptr, std::string(kNotPartOfStudy), x[k.triplets], num(e), num(lo), num(up),
           assessable ? finding(lo, up, kBelowOwn) : kNotAssessable, nullptr, nullptr, nullptr,
           std::string(kNotPartOfStudy)});
  }
}

/// Table 4 beside the study's, and which of its findings this campaign reproduces.
Table4Findings judge_table4(const Table& t4, const CampaignShape& c) {
  const Table4Columns k{column_index(t4, "comparison"), column_index(t4, "triplets"),    column_index(t4, "ratio"),
                        column_index(t4, "ratio_lower"), column_index(t4, "ratio_upper"), column_index(t4, "analysis")};
  Table4Findings f{published_table4_frame()};
  for (std::size_t j = 0; j < kStudyComparisonCount; ++j) add_study_comparison(j, t4, k, c.assessable, f);
  add_own_comparisons(t4, k, c.assessable, f.t);
  f.t.notes.push_back(fmt::format(
      "Finding = where the simultaneous interval lies: wholly below 1, containing 1, or wholly above 1 (ours: the "
      "study's own reading of its Table 4). Reproduced = this campaign's interval lies on the same side as the "
      "study's. Same direction = both estimates on the same side of 1 (descriptive). This campaign's intervals are "
      "at {:.2f}%, the study's at 98.75%. Overlap is descriptive, not a test of a difference between the two.",
      c.level * 100));
  return f;
}

/// published_rule: the all-four rule on the study's Table 4 and on this campaign's (when it is
/// assessable and has all four); `same` is set to whether the verdicts agree (null when not judged).
Table all_four_rule(const Table4Findings& f, bool assessable, json& same) {
  const auto& defs = study_comparisons();
  std::array<RatioInterval, kStudyComparisonCount> published{};
  for (std::size_t j = 0; j < kStudyComparisonCount; ++j)
    published[j] = {defs[j].label, kStudyTable4[j].estimate, kStudyTable4[j].lower, kStudyTable4[j].upper};
  const Verdict sv = decide(published);
  Table rule{"published_rule", "The predefined all-four rule: the study's verdict and this campaign's",
             {{"rule", 0}, {"study verdict", 0, "study_verdict"}, {"this verdict", 0, "this_verdict"},
              {"same verdict", 0, "same_verdict"}},
             {},
             {}};
  const std::string text =
      "general benefit iff all four upper bounds < 1 and all four estimates <= 0.95; harm iff a lower bound > 1";
  same = nullptr;
  if (assessable && f.n_compared == static_cast<int>(kStudyComparisonCount)) {
    const Verdict tv = decide(f.mine);
    const bool s = tv.general_benefit == sv.general_benefit && tv.harm == sv.harm;
    same = s;
    rule.add({text, verdict_words(sv.general_benefit, sv.harm), verdict_words(tv.general_benefit, tv.harm), yes_no(s)});
  } else {
    rule.add({text, verdict_words(sv.general_benefit, sv.harm),
              assessable ? std::string("not all four comparisons present") : std::string(kNotAssessable),
              kNotAssessable});
  }
  rule.notes.push_back("The study's verdict is the rule applied to its published Table 4 (as its text states: no "
                       "general responsiveness benefit, no detected harm).");
  return rule;
}

/// The table of the study's statements about a table it gives no numbers for.
Table statements_frame(const std::string& id, const std::string& title) {
  return Table{id,
               title,
               {{"statement (study)", 0, "statement"}, {"canary", 0}, {"this campaign", 0, "this_campaign"},
                {"holds here", 0, "holds_here"}},
               {},
               {}};
}

/// published_table5: the study's Table 5 statements checked per canary on this campaign's Table 5.
Table table5_statements(const Table& t5) {
  const std::string zram = kStudyArms[kStudyStaticArm].name, delayed = kStudyArms[kStudyDelayedArm].name,
                    reclaim = kStudyArms[kStudyTreatment].name;
  const Cells c5 = index(t5, "configuration", "canary");
  Table s5 = statements_frame(
      "published_table5",
      "Table 5: the study's statements (its text gives no Table 5 numbers) checked on this campaign's Table 5");
  for (const std::string canary : {"compute", "sqlite"}) {
    std::map<std::string, std::optional<double>> resp, wake50, wake99;
    for (const auto& cf : configs()) {
      resp[cf] = cell(c5, t5, cf, canary, "response_p99_median_ms");
      wake50[cf] = cell(c5, t5, cf, canary, "wake_p50_median_ms");
      wake99[cf] = cell(c5, t5, cf, canary, "wake_p99_median_ms");
    }
    const auto top_resp = extreme(resp, true), top_wake = extreme(wake50, true);
    s5.add({"Delayed activation's larger response times coincided with larger wake-delay medians", canary,
            fmt::format("largest response p99 median: {}; largest wake p50 median: {} (delayed {} / {})",
                        top_resp.value_or("n/a"), top_wake.value_or("n/a"), ms_text(resp[delayed]),
                        ms_text(wake50[delayed])),
            !top_resp || !top_wake ? std::string("n/a") : yes_no(*top_resp == delayed && *top_wake == delayed)});
    const auto rw = wake99[reclaim], sw = wake99[zram];
    s5.add({"Bounded reclaim's median wake p99 was slightly higher than static zram's", canary,
            fmt::format("wake p99 median: bounded reclaim {}, static zram {}", ms_text(rw), ms_text(sw)),
            rw && sw ? yes_no(*rw > *sw) : std::string("n/a")});
  }
  s5.notes.push_back("The study: \"Delayed activation's larger response times coincided with larger wake-delay "
                     "medians\" and \"its [bounded reclaim's] median compute and SQLite wake p99 values were slightly "
                     "higher\" than static zram's. Checked on medians over this campaign's cases (its Table 5 follows).");
  return s5;
}

/// published_table6: the study's Table 6 statements checked per canary over this campaign's regimes.
Table table6_statements(const Table& t6) {
  const std::string zram = kStudyArms[kStudyStaticArm].name, delayed = kStudyArms[kStudyDelayedArm].name,
                    reclaim = kStudyArms[kStudyTreatment].name;
  const Cells c6 = index(t6, "regime", "configuration");
  std::set<std::string> regimes6;
  for (const auto& [k, row] : c6.rows) regimes6.insert(k.first);
  Table s6 = statements_frame(
      "published_table6",
      "Table 6: the study's statements (its text gives no Table 6 numbers) checked on this campaign's Table 6");
  for (const std::string canary : {"compute", "sqlite"}) {
    const std::string column = canary + "_p99_median_ms";
    int delayed_top = 0, reclaim_low = 0, static_low = 0, cells = 0;
    for (const auto& rg : regimes6) {
      std::map<std::string, std::optional<double>> v;
      for (const auto& cf : configs()) v[cf] = cell(c6, t6, rg, cf, column);
      const auto top = extreme(v, true), low = extreme(v, false);
      if (!top || !low) continue;
      ++cells;
      delayed_top += *top == delayed;
      reclaim_low += *low == reclaim;
      static_low += *low == zram;
    }
    s6.add({"Delayed activation had the highest median p99 in every regime", canary,
            fmt::format("highest in {} of {} regimes", delayed_top, cells),
            cells ? yes_no(delayed_top == cells) : std::string("n/a")});
    s6.add({"Bounded reclaim was not the lowest in every cell; it alternated with static zram", canary,
            fmt::format("lowest: bounded reclaim in {}, static zram in {} of {} regimes", reclaim_low, static_low, cells),
            cells ? yes_no(reclaim_low > 0 && reclaim_low < cells && reclaim_low + static_low == cells)
                  : std::string("n/a")});
  }
  s6.notes.push_back("The study: \"Delayed activation had the highest median p99 in every regime, while bounded "
                     "reclaim alternated with static zram depending on workload and regime\". Alternation is checked "
                     "per canary over the regimes (the lowest is bounded reclaim in some, static zram in the rest). "
                     "Unpaired cell medians, descriptive (study). Highest and lowest are among the study's three arms "
                     "only: the statements are about them, and this campaign's other arms (table published_arms) are "
                     "left out.");
  return s6;
}

/// `t` retitled as this campaign's.
Table as_this_campaigns(const Table& t) {
  Table mine = t;
  mine.title = "This campaign's " + t.title;
  return mine;
}

}  // namespace

Report compare_with_study(const Report& ours, const std::string& label) {
  Report r;
  r.title = "Reclaim ablation: " + label + " beside the study's published results";
  r.markdown_width = kTerminalWidth;
  const Table& t1 = find_report_table(ours, "table1_constants");
  const Table& t4 = find_report_table(ours, "table4_primary");
  const Table& t5 = find_report_table(ours, "table5_wake_service");
  const Table& t6 = find_report_table(ours, "table6_regime_medians");
  const CampaignShape shape = shape_of(ours);
  shape_warnings(shape, r);
  std::vector<std::string> differences;
  Table st = setting_beside_study(study_setting_rows(t1, shape), differences, r);
  Table4Findings t4f = judge_table4(t4, shape);
  json rule_same = nullptr;
  Table rule = all_four_rule(t4f, shape.assessable, rule_same);
  r.summary.push_back(
      shape.assessable
          ? fmt::format("{} of {} primary comparisons reproduce the study's finding; the all-four rule gives {} verdict.",
                        t4f.n_reproduced, t4f.n_compared,
                        rule_same.is_boolean() ? (rule_same.get<bool>() ? "the study's" : "another") : "no comparable")
          : "Not assessable: nothing is reproduced or contradicted (see the warnings).");
  Table s5 = table5_statements(t5);
  Table s6 = table6_statements(t6);
  // Mechanism medians: the study's published numbers beside this campaign's.
  const CompareSide this_side = side_from_report(ours, label);
  Report mech = compare_sides(published_side(), this_side, SideNames{"study", "this campaign"});
  r.tables.push_back(std::move(st));
  r.tables.push_back(std::move(t4f.t));
  r.tables.push_back(std::move(rule));
  r.tables.push_back(std::move(s5));
  r.tables.push_back(as_this_campaigns(t5));
  r.tables.push_back(std::move(s6));
  r.tables.push_back(as_this_campaigns(t6));
  r.tables.push_back(find_report_table(mech, "compare_mechanism"));
  r.tables.push_back(published_stall(this_side));
  Table arms = find_report_table(mech, "compare_arms");
  arms.id = "published_arms";
  arms.title = "Arms: the study's findings are judged on the arms that carry the study's names (and its "
               "parameters); the others are not part of the study";
  r.tables.push_back(std::move(arms));
  r.extra = {{"assessable", shape.assessable},
             {"reproduced", t4f.reproduced},
             {"rule_same_verdict", rule_same},
             {"setting_differences", differences}};
  return r;
}

}  // namespace analysis
