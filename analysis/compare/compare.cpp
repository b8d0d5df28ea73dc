// Side-by-side comparison of two campaigns, or of one with the study (see compare.hpp).
#include "analysis/compare/compare.hpp"

#include "analysis/data/arms.hpp"

#include "analysis/data/case_summary.hpp"
#include "analysis/data/study_facts.hpp"
#include "analysis/data/triplets.hpp"
#include "harness/text/join.hpp"

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


json opt(const std::optional<double>& v) { return v ? num(*v) : json(nullptr); }

}  // namespace

const Table& find_report_table(const Report& r, const std::string& id) {
  for (const auto& t : r.tables)
    if (t.id == id) return t;
  throw std::invalid_argument("compare: the report of " + r.title + " has no table " + id);
}

std::optional<double> cell_number(const nlohmann::json& c) {
  return c.is_number() ? std::optional<double>(c.get<double>()) : std::nullopt;
}

CompareSide side_from_report(const Report& r, const std::string& label) {
  CompareSide s;
  s.label = label;
  if (r.provenance) s.accelerators = harness::text::join(r.provenance->accelerators);
  const Table& t4 = find_report_table(r, "table4_primary");
  const auto ci = column_index(t4, "comparison"), ti = column_index(t4, "triplets"), ei = column_index(t4, "ratio"),
             li = column_index(t4, "ratio_lower"), ui = column_index(t4, "ratio_upper");
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
  const Table& m = find_report_table(r, "mechanism");
  const auto cfg = column_index(m, "configuration");
  for (const auto& row : m.rows) {
    s.arms.push_back(row[cfg].get<std::string>());
    for (const auto& [name, header] : quantities()) s.mechanism[row[cfg].get<std::string>()][name] = cell_number(row[column_index(m, name)]);
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
  for (std::size_t i = 0; i < kStudyArmCount; ++i) {
    const auto& st = kStudyMechanism[i];
    s.arms.push_back(kStudyArms[i].name);
    s.arm_definitions[kStudyArms[i].name] =
        static_cast<int>(i) == kStudyTreatment
            ? fmt::format("the study's (policy {}, params {{\"dose_mib\":96}})", kStudyArms[i].name)
            : std::string("the study's");
    auto& q = s.mechanism[kStudyArms[i].name];
    for (const auto& [name, header] : quantities()) q[name] = std::nullopt;  // not published
    q["swap_out_kib"] = st.swapout_kib;
    q["refaults"] = st.refaults;
    // Its PSI stall names no owner (bg, fg or system): not one of these quantities; `harness
    // compare --published` shows it beside all three (table published_stall).
  }
  return s;
}

std::string side_name(std::size_t i) {
  if (i >= 26) throw std::invalid_argument("compare: at most 26 campaigns side by side (A to Z), got side " + std::to_string(i + 1));
  return std::string(1, static_cast<char>('A' + i));
}

Report compare_sides(const CompareSide& a, const CompareSide& b, const SideNames& names) {
  return compare_sides(std::vector<CompareSide>{a, b}, {names.a, names.b});
}

namespace {

/// Column names of each side: as given (names) and as tidy column ids (tidy); side 0 is the reference.
struct SideColumns {
  const std::vector<std::string>& names;
  std::vector<std::string> tidy;
};

/// compare_table4 without rows: per side its blocks, ratio and interval, then each later side
/// against the reference.
Table side_table4_frame(const std::vector<CompareSide>& sides, const SideColumns& k) {
  const std::string& A = k.names[0];
  const std::string& ta = k.tidy[0];
  Table t{"compare_table4", "Table 4 side by side: p99 response-time ratio, treatment / comparator (the study's: "
                           "bounded reclaim / comparator)",
          {{"comparison", 0}},
          {},
          {}};
  t.side_names = k.names;
  for (std::size_t i = 0; i < sides.size(); ++i) {
    const std::string &X = k.names[i], &tx = k.tidy[i];
    t.columns.push_back({X + " " + sides[i].unit + "s", 0, tx + "_triplets", i, sides[i].unit + "s"});
    t.columns.push_back({X + " ratio", 3, tx + "_ratio", i, "ratio"});
    t.columns.push_back({X + " lower", 3, tx + "_ratio_lower", i, "lower"});
    t.columns.push_back({X + " upper", 3, tx + "_ratio_upper", i, "upper"});
  }
  for (std::size_t i = 1; i < sides.size(); ++i) {
    const std::string &X = k.names[i], &tx = k.tidy[i];
    t.columns.push_back({X + " / " + A, 3, "ratio_" + tx + "_over_" + ta, i, "/ " + A});
    t.columns.push_back({X + " - " + A, 3, "ratio_" + tx + "_minus_" + ta, i, "- " + A});
    t.columns.push_back({X + " and " + A + " intervals overlap", 0, tx + "_" + ta + "_intervals_overlap", i,
                         "overlaps " + A});
    t.columns.push_back({A + " estimate in " + X + " interval", 0, ta + "_in_" + tx + "_interval", i,
                         "holds " + A + "'s ratio"});
    t.columns.push_back({X + " estimate in " + A + " interval", 0, tx + "_in_" + ta + "_interval", i,
                         "ratio in " + A + "'s"});
  }
  return t;
}

/// The row of `label` in s.table4, or nullptr.
const SideRatio* side_ratio(const CompareSide& s, const std::string& label) {
  for (const auto& c : s.table4)
    if (c.label == label) return &c;
  return nullptr;
}

/// The compare_table4 row of one comparison.
std::vector<json> side_table4_row(const std::vector<CompareSide>& sides, const SideColumns& k,
                                  const std::string& label) {
  auto yes_no = [](bool b) { return json(b ? "yes" : "no"); };
  std::vector<json> row{label};
  std::vector<const SideRatio*> got;
  for (const auto& s : sides) {
    const SideRatio* y = side_ratio(s, label);
    got.push_back(y);
    if (!y) {
      row.insert(row.end(), {nullptr, nullptr, nullptr, nullptr});
      continue;
    }
    row.insert(row.end(), {y->triplets ? json(*y->triplets) : json(nullptr), num(y->estimate), num(y->lower),
                           num(y->upper)});
  }
  const SideRatio* x = got[0];
  for (std::size_t i = 1; i < sides.size(); ++i) {
    const SideRatio* y = got[i];
    if (!x || !y) {
      row.insert(row.end(), {nullptr, nullptr, (x ? k.names[i] : k.names[0]) + " lacks it", nullptr, nullptr});
      continue;
    }
    row.insert(row.end(), {num(y->estimate / x->estimate), num(y->estimate - x->estimate),
                           yes_no(x->lower <= y->upper && y->lower <= x->upper),
                           yes_no(y->lower <= x->estimate && x->estimate <= y->upper),
                           yes_no(x->lower <= y->estimate && y->estimate <= x->upper)});
  }
  return row;
}

/// Table 4: every comparison of any side, the reference's first; columns per side, then each
/// later side against the reference.
Table side_table4(const std::vector<CompareSide>& sides, const SideColumns& k) {
  Table t = side_table4_frame(sides, k);
  std::vector<std::string> labels;  // every comparison, in the order of first appearance
  for (const auto& s : sides)
    for (const auto& x : s.table4)
      if (std::find(labels.begin(), labels.end(), x.label) == labels.end()) labels.push_back(x.label);
  for (const auto& label : labels) t.add(side_table4_row(sides, k, label));
  t.notes.push_back(fmt::format(
      "Ratio < 1 favours the treatment (bounded reclaim in the study's four). {} is the reference: every other side "
      "is set against it. Each side's interval is its own simultaneous interval (98.75% for the study's four "
      "comparisons); n/a = the side does not have the comparison. Overlap and containment are descriptive, not "
      "a test of a difference between the campaigns.",
      k.names[0]));
  return t;
}

/// Every arm of any side: the reference's order, then the others.
std::vector<std::string> arms_of_sides(const std::vector<CompareSide>& sides) {
  std::vector<std::string> arms;
  for (const auto& s : sides)
    for (const auto& x : s.arms)
      if (std::find(arms.begin(), arms.end(), x) == arms.end()) arms.push_back(x);
  return arms;
}

/// compare_mechanism: the mechanism medians of every arm and quantity some side has.
Table side_mechanism(const std::vector<CompareSide>& sides, const SideColumns& k, const std::vector<std::string>& arms) {
  const std::size_t n = sides.size();
  Table m{"compare_mechanism", "Mechanism medians side by side (pressure phase, per configuration)",
          {{"configuration", 0}, {"quantity", 0}},
          {},
          {}};
  m.side_names = k.names;
  for (std::size_t i = 0; i < n; ++i) m.columns.push_back({k.names[i], 3, k.tidy[i], i, "median"});
  for (std::size_t i = 1; i < n; ++i) {
    m.columns.push_back({k.names[i] + " - " + k.names[0], 3, k.tidy[i] + "_minus_" + k.tidy[0], i, "- " + k.names[0]});
    m.columns.push_back({k.names[i] + " / " + k.names[0] + " - 1 (%)", 1, k.tidy[i] + "_over_" + k.tidy[0] + "_change_pct",
                         i, "/ " + k.names[0] + " - 1 (%)"});
  }
  for (const std::string& c : arms) {
    for (const auto& [name, header] : quantities()) {
      auto get = [&](const CompareSide& s) -> std::optional<double> {
        auto it = s.mechanism.find(c);
        if (it == s.mechanism.end()) return std::nullopt;
        auto q = it->second.find(name);
        return q == it->second.end() ? std::nullopt : q->second;
      };
      std::vector<std::optional<double>> v;
      for (const auto& s : sides) v.push_back(get(s));
      if (std::none_of(v.begin(), v.end(), [](const auto& x) { return x.has_value(); })) continue;
      std::vector<json> row{c, header};
      for (const auto& x : v) row.push_back(opt(x));
      const auto& va = v[0];
      for (std::size_t i = 1; i < n; ++i) {
        const auto& vb = v[i];
        row.push_back(va && vb ? num(*vb - *va) : json(nullptr));
        row.push_back(va && vb && *va != 0 ? num(100.0 * (*vb / *va - 1.0)) : json(nullptr));
      }
      m.add(std::move(row));
    }
  }
  m.notes.push_back("Medians over each side's cases of the pressure-phase counters (mechanism table of `harness "
                    "analyze`). n/a = the side does not have the quantity (of these the study publishes swap-out and "
                    "refaults only; its PSI some/full stall names no owner, bg, fg or system, and is shown beside "
                    "all three in `harness compare --published`, table published_stall). Stall times are inflated "
                    "under TCG.");
  return m;
}

/// compare_arms: which side has each arm, and its definition there.
Table side_arms(const std::vector<CompareSide>& sides, const SideColumns& k, const std::vector<std::string>& arms) {
  const std::size_t n = sides.size();
  Table arms_t{"compare_arms", n == 2 ? "Arms of both sides" : "Arms of every side", {{"arm", 0}}, {}, {}};
  arms_t.side_names = k.names;
  for (std::size_t i = 0; i < n; ++i) arms_t.columns.push_back({k.names[i], 0, k.tidy[i], i, "runs it"});
  for (std::size_t i = 0; i < n; ++i)
    arms_t.columns.push_back({k.names[i] + " definition", 0, k.tidy[i] + "_definition", i, "definition"});
  for (const std::string& arm : arms) {
    auto has = [&](const CompareSide& s) { return std::find(s.arms.begin(), s.arms.end(), arm) != s.arms.end(); };
    auto definition = [&](const CompareSide& s) -> json {
      if (!has(s)) return nullptr;
      const auto it = s.arm_definitions.find(arm);
      return it == s.arm_definitions.end() || it->second.empty() ? json("not recorded") : json(it->second);
    };
    std::vector<json> row{arm};
    for (const auto& s : sides) row.push_back(has(s) ? std::string("yes") : s.lacks_arm);
    for (const auto& s : sides) row.push_back(definition(s));
    arms_t.add(std::move(row));
  }
  arms_t.notes.push_back("Every arm of any side. An arm a side lacks is in no comparison of that side: its "
                         "Table 4 rows and mechanism medians read n/a there. Definition: the arm's policy and "
                         "parameters as the side's DB records them (the `arms` table, results schema version 6).");
  return arms_t;
}

}  // namespace

Report compare_sides(const std::vector<CompareSide>& sides, const std::vector<std::string>& names) {
  if (sides.empty() || names.size() != sides.size())
    throw std::invalid_argument("compare: " + std::to_string(sides.size()) + " side(s) and " +
                                std::to_string(names.size()) + " name(s); need one name per side, at least one side");
  SideColumns k{names, {}};
  for (const auto& x : names) k.tidy.push_back(tidy_name(x));
  Report r;
  r.title = fmt::format("Reclaim ablation: comparison of {} sides, {} the reference", sides.size(), names[0]);
  std::vector<std::string> which;
  for (std::size_t i = 0; i < sides.size(); ++i) which.push_back(fmt::format("{} = {}", names[i], sides[i].label));
  r.summary.push_back("Sides: " + harness::text::join(which, "; ") + ".");
  r.markdown_width = kTerminalWidth;
  for (std::size_t i = 0; i < sides.size(); ++i)
    if (sides[i].accelerators.find("tcg") != std::string::npos)
      r.warnings.push_back(fmt::format("{} ({}) ran under TCG: its absolute timings are inflated; a difference in "
                                       "ratios is not timing evidence.",
                                       names[i], sides[i].label));
  r.tables.push_back(side_table4(sides, k));
  const std::vector<std::string> arms = arms_of_sides(sides);
  r.tables.push_back(side_mechanism(sides, k, arms));
  r.tables.push_back(side_arms(sides, k, arms));
  return r;
}

}  // namespace analysis
