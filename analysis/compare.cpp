// Side-by-side comparison of two campaigns, or of one with the study (see compare.hpp).
#include "analysis/compare.hpp"

#include "analysis/arms.hpp"

#include "analysis/case_summary.hpp"
#include "analysis/study_medians.hpp"
#include "analysis/triplets.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <stdexcept>

namespace analysis {
namespace {

using nlohmann::json;

// Mechanism quantities compared, as the mechanism table names its columns (tidy names).
const std::vector<std::pair<std::string, std::string>>& quantities() {
  static const std::vector<std::pair<std::string, std::string>> q = {
      {"bg_psi_some_stall_s", "bg PSI some stall (s)"}, {"bg_psi_full_stall_s", "bg PSI full stall (s)"},
      {"fg_psi_some_stall_s", "fg PSI some stall (s)"}, {"fg_psi_full_stall_s", "fg PSI full stall (s)"},
      {"system_psi_some_stall_s", "system PSI some stall (s)"},
      {"system_psi_full_stall_s", "system PSI full stall (s)"}, {"refaults", "refaults"},
      {"swap_out_kib", "swap-out (KiB)"},               {"zram_orig_peak_mib", "zram orig peak (MiB)"},
      {"zram_compr_peak_mib", "zram compr peak (MiB)"}, {"zram_mem_used_peak_mib", "zram mem_used peak (MiB)"}};
  return q;
}

const Table& find_table(const Report& r, const std::string& id) { return find_report_table(r, id); }
std::size_t col(const Table& t, const std::string& name) { return column_index(t, name); }

json opt(const std::optional<double>& v) { return v ? num(*v) : json(nullptr); }

}  // namespace

const Table& find_report_table(const Report& r, const std::string& id) {
  for (const auto& t : r.tables)
    if (t.id == id) return t;
  throw std::invalid_argument("compare: the report of " + r.title + " has no table " + id);
}

std::size_t column_index(const Table& t, const std::string& name) {
  for (std::size_t j = 0; j < t.columns.size(); ++j)
    if (column_name(t.columns[j]) == name) return j;
  throw std::invalid_argument("compare: table " + t.id + " has no column " + name);
}

std::optional<double> cell_number(const nlohmann::json& c) {
  return c.is_number() ? std::optional<double>(c.get<double>()) : std::nullopt;
}

CompareSide side_from_report(const Report& r, const std::string& label) {
  CompareSide s;
  s.label = label;
  if (r.provenance) {
    for (const auto& a : r.provenance->accelerators) s.accelerators += (s.accelerators.empty() ? "" : ", ") + a;
  }
  const Table& t4 = find_table(r, "table4_primary");
  const auto ci = col(t4, "comparison"), ti = col(t4, "triplets"), ei = col(t4, "ratio"), li = col(t4, "ratio_lower"),
             ui = col(t4, "ratio_upper");
  std::optional<std::size_t> ai;  // sensitivity rows (column analysis) are not the primary comparisons
  for (std::size_t j = 0; j < t4.columns.size(); ++j)
    if (column_name(t4.columns[j]) == "analysis") ai = j;
  for (const auto& row : t4.rows) {
    if (ai && row[*ai] != "primary") continue;
    SideRatio x;
    x.label = row[ci].get<std::string>();
    x.estimate = row[ei].get<double>();
    x.lower = row[li].get<double>();
    x.upper = row[ui].get<double>();
    if (row[ti].is_number_integer()) x.triplets = row[ti].get<int>();
    s.table4.push_back(x);
  }
  if (const std::string h = t4.columns[ti].header; h.size() > 1 && h.back() == 's') s.unit = h.substr(0, h.size() - 1);
  const Table& m = find_table(r, "mechanism");
  const auto cfg = col(m, "configuration");
  for (const auto& row : m.rows) {
    s.arms.push_back(row[cfg].get<std::string>());
    for (const auto& [name, header] : quantities()) s.mechanism[row[cfg].get<std::string>()][name] = cell_number(row[col(m, name)]);
  }
  // The report's arms (every arm, with its definition when the DB records it).
  if (r.extra.is_object() && r.extra.contains("arms") && r.extra["arms"].is_array())
    for (const auto& a : r.extra["arms"]) {
      if (!a.contains("name") || !a["name"].is_string()) continue;
      const std::string name = a["name"].get<std::string>();
      if (std::find(s.arms.begin(), s.arms.end(), name) == s.arms.end()) s.arms.push_back(name);
      s.arm_definitions[name] =
          a.contains("policy") && a["policy"].is_string()
              ? fmt::format("policy {}, params {}", a["policy"].get<std::string>(),
                            a.contains("params") && !a["params"].is_null() ? a["params"].dump() : std::string("{}"))
              : std::string();
    }
  return s;
}

CompareSide published_side() {
  CompareSide s;
  s.label = "study (published)";
  const auto& defs = study_comparisons();
  for (std::size_t j = 0; j < defs.size(); ++j)
    s.table4.push_back({defs[j].label, kStudyTable4[j].estimate, kStudyTable4[j].lower, kStudyTable4[j].upper,
                        kStudyTriplets});
  s.lacks_arm = "not part of the study";
  for (int i = 0; i < 3; ++i) {
    const auto& st = kStudyMechanism[i];
    s.arms.push_back(kStudyArms[i].name);
    s.arm_definitions[kStudyArms[i].name] =
        i == kStudyTreatment ? "the study's (policy bounded-reclaim, params {\"dose_mib\":96})" : "the study's";
    auto& q = s.mechanism[kStudyArms[i].name];
    for (const auto& [name, header] : quantities()) q[name] = std::nullopt;  // not published
    q["swap_out_kib"] = st.swapout_kib;
    q["refaults"] = st.refaults;
    // Its PSI stall names no owner (bg, fg or system): not one of these quantities; `harness
    // compare --published` shows it beside all three (table published_stall).
  }
  return s;
}

Report compare_sides(const CompareSide& a, const CompareSide& b, const SideNames& names) {
  Report r;
  const std::string& A = names.a;
  const std::string& B = names.b;
  const std::string ta = tidy_name(A), tb = tidy_name(B);
  r.title = fmt::format("Reclaim ablation: comparison, {} = {}, {} = {}", A, a.label, B, b.label);
  for (const auto& [side, s] : {std::pair<const std::string*, const CompareSide*>{&A, &a}, {&B, &b}})
    if (s->accelerators.find("tcg") != std::string::npos)
      r.warnings.push_back(fmt::format("{} ({}) ran under TCG: its absolute timings are inflated; a difference in "
                                       "ratios is not timing evidence.",
                                       *side, s->label));
  Table t{"compare_table4", "Table 4 side by side: p99 response-time ratio, treatment / comparator (the study's: "
                           "bounded reclaim / comparator)",
          {{"comparison", 0},
           {A + " " + a.unit + "s", 0, ta + "_triplets"},
           {A + " ratio", 3, ta + "_ratio"},
           {A + " lower", 3, ta + "_ratio_lower"},
           {A + " upper", 3, ta + "_ratio_upper"},
           {B + " " + b.unit + "s", 0, tb + "_triplets"},
           {B + " ratio", 3, tb + "_ratio"},
           {B + " lower", 3, tb + "_ratio_lower"},
           {B + " upper", 3, tb + "_ratio_upper"},
           {B + " / " + A, 3, "ratio_" + tb + "_over_" + ta},
           {B + " - " + A, 3, "ratio_" + tb + "_minus_" + ta},
           {"intervals overlap", 0},
           {A + " estimate in " + B + " interval", 0, ta + "_in_" + tb + "_interval"},
           {B + " estimate in " + A + " interval", 0, tb + "_in_" + ta + "_interval"}},
          {},
          {}};
  for (const auto& x : a.table4) {
    const SideRatio* y = nullptr;
    for (const auto& c : b.table4)
      if (c.label == x.label) y = &c;
    auto trip = [](const SideRatio* s) { return s && s->triplets ? json(*s->triplets) : json(nullptr); };
    if (!y) {
      t.add({x.label, trip(&x), num(x.estimate), num(x.lower), num(x.upper), nullptr, nullptr, nullptr, nullptr, nullptr,
             nullptr, B + " lacks it", nullptr, nullptr});
      continue;
    }
    const bool overlap = x.lower <= y->upper && y->lower <= x.upper;
    t.add({x.label, trip(&x), num(x.estimate), num(x.lower), num(x.upper), trip(y), num(y->estimate), num(y->lower),
           num(y->upper), num(y->estimate / x.estimate), num(y->estimate - x.estimate), overlap ? "yes" : "no",
           y->lower <= x.estimate && x.estimate <= y->upper ? "yes" : "no",
           x.lower <= y->estimate && y->estimate <= x.upper ? "yes" : "no"});
  }
  // The comparisons only B has (a k-arm campaign beside another family), after A's.
  for (const auto& y : b.table4) {
    if (std::any_of(a.table4.begin(), a.table4.end(), [&](const SideRatio& x) { return x.label == y.label; })) continue;
    t.add({y.label, nullptr, nullptr, nullptr, nullptr, y.triplets ? json(*y.triplets) : json(nullptr), num(y.estimate),
           num(y.lower), num(y.upper), nullptr, nullptr, A + " lacks it", nullptr, nullptr});
  }
  t.notes.push_back(
      "Ratio < 1 favours the treatment (bounded reclaim in the study's four). Each side's interval is its own simultaneous interval (98.75% for the "
      "study's four comparisons). Overlap and containment are descriptive, not a test of a difference between "
      "the campaigns.");
  r.tables.push_back(std::move(t));

  Table m{"compare_mechanism", "Mechanism medians side by side (pressure phase, per configuration)",
          {{"configuration", 0}, {"quantity", 0}, {A, 3, ta}, {B, 3, tb}, {B + " - " + A, 3, tb + "_minus_" + ta},
           {B + " / " + A + " - 1 (%)", 1, tb + "_over_" + ta + "_change_pct"}},
          {},
          {}};
  std::vector<std::string> arms = a.arms;  // A's arms in its order, then B's others
  for (const auto& x : b.arms)
    if (std::find(arms.begin(), arms.end(), x) == arms.end()) arms.push_back(x);
  for (const std::string& c : arms) {
    for (const auto& [name, header] : quantities()) {
      auto get = [&](const CompareSide& s) -> std::optional<double> {
        auto it = s.mechanism.find(c);
        if (it == s.mechanism.end()) return std::nullopt;
        auto q = it->second.find(name);
        return q == it->second.end() ? std::nullopt : q->second;
      };
      const auto va = get(a), vb = get(b);
      if (!va && !vb) continue;
      m.add({c, header, opt(va), opt(vb), va && vb ? num(*vb - *va) : json(nullptr),
             va && vb && *va != 0 ? num(100.0 * (*vb / *va - 1.0)) : json(nullptr)});
    }
  }
  m.notes.push_back("Medians over each side's cases of the pressure-phase counters (mechanism table of `harness "
                    "analyze`). n/a = the side does not have the quantity (of these the study publishes swap-out and "
                    "refaults only; its PSI some/full stall names no owner, bg, fg or system, and is shown beside "
                    "all three in `harness compare --published`, table published_stall). Stall times are inflated "
                    "under TCG.");
  r.tables.push_back(std::move(m));

  Table arms_t{"compare_arms", "Arms of both sides",
               {{"arm", 0}, {A, 0, ta}, {B, 0, tb}, {A + " definition", 0, ta + "_definition"},
                {B + " definition", 0, tb + "_definition"}},
               {},
               {}};
  for (const std::string& arm : arms) {
    auto has = [&](const CompareSide& s) { return std::find(s.arms.begin(), s.arms.end(), arm) != s.arms.end(); };
    auto definition = [&](const CompareSide& s) -> json {
      if (!has(s)) return nullptr;
      const auto it = s.arm_definitions.find(arm);
      return it == s.arm_definitions.end() || it->second.empty() ? json("not recorded") : json(it->second);
    };
    arms_t.add({arm, has(a) ? std::string("yes") : a.lacks_arm, has(b) ? std::string("yes") : b.lacks_arm,
                definition(a), definition(b)});
  }
  arms_t.notes.push_back("Every arm of either side. An arm only one side has is in no comparison of the other: its "
                         "Table 4 rows and mechanism medians show n/a there. Definition: the arm's policy and "
                         "parameters as the side's DB records them (the `arms` table, results schema version 6).");
  r.tables.push_back(std::move(arms_t));
  return r;
}

}  // namespace analysis
