#pragma once
// The analysis of a campaign DB a guest produced, cross-checked: `harness analyze DB --out DIR`
// (the product) and analysis/reference/bootstrap_ref.py (the independent NumPy reference, written
// from docs/PROTOCOL.md) on the same DB with the same B and seed. Shared by the campaign vm tests
// that analyse their DB (tests/vm/campaign). Header-only; needs HARNESS_SOURCE_DIR and
// HARNESS_BINARY_DIR; include as "tests/common/analysis_vs_reference.hpp".
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <string>

#include "tests/common/run_harness.hpp"
#include "tests/common/slurp.hpp"

namespace test_support {

/// What both computed.
struct AnalysisPair {
  int analyze_rc = -1, reference_rc = -1;
  std::string analyze_log;     ///< stdout + stderr of `harness analyze`
  std::string report_md;       ///< DIR/report.md
  nlohmann::json report;       ///< DIR/report.json (null when unreadable)
  nlohmann::json reference;    ///< bootstrap_ref.py's JSON (null when it failed)
  std::string reference_text;  ///< its raw output
};

/// Runs both on `db` (B = 2000, seed 7) into `out_dir`.
inline AnalysisPair analyse_with_reference(const std::string& db, const std::string& out_dir) {
  AnalysisPair a;
  const auto r = run_harness("analyze " + db + " --out " + out_dir + " -B 2000 --seed 7", out_dir + ".analyze.log");
  a.analyze_rc = r.code;
  a.analyze_log = r.out;
  a.report_md = slurp(out_dir + "/report.md");
  a.report = nlohmann::json::parse(slurp(out_dir + "/report.json"), nullptr, false);
  if (a.report.is_discarded()) a.report = nullptr;
  const std::string ref_out = out_dir + ".reference.json";
  const int st = std::system(("/usr/bin/python3 " HARNESS_SOURCE_DIR "/analysis/reference/bootstrap_ref.py " + db +
                              " --replicates 2000 --seed 7 > " + ref_out + " 2>&1").c_str());
  a.reference_rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  a.reference_text = slurp(ref_out);
  a.reference = nlohmann::json::parse(a.reference_text, nullptr, false);
  if (a.reference.is_discarded()) a.reference = nullptr;
  return a;
}

/// Table `id` of report.json as rows of {column_name: cell} (empty when absent).
inline std::vector<nlohmann::json> report_rows(const nlohmann::json& report, const std::string& id) {
  std::vector<nlohmann::json> out;
  if (!report.is_object()) return out;
  for (const auto& t : report["tables"]) {
    if (t.value("id", "") != id) continue;
    for (const auto& row : t["rows"]) {
      nlohmann::json o = nlohmann::json::object();
      for (std::size_t i = 0; i < row.size() && i < t["column_names"].size(); ++i) o[t["column_names"][i].get<std::string>()] = row[i];
      out.push_back(o);
    }
  }
  return out;
}

/// The product and the reference agree: every Table 4 row (one per comparison of the declared
/// family, as many as the reference reads from the DB; label, triplets, ratio and its
/// bounds; with one triplet per stratum the bounds equal the ratio) to 1e-9 relative for the
/// estimate (Monte Carlo tolerance `bound_tol` on the log scale for the bounds, 0 = exact), and
/// the outcome counts per arm (cases, censored requests, truncated traces, censored
/// p99, lost cases, imputed p99 values), and per arm and canary Table 5's deadline misses and
/// requests summed over the measured cases.
inline void expect_agreement(const AnalysisPair& a, int triplets, double bound_tol) {
  ASSERT_EQ(a.analyze_rc, 0) << a.analyze_log;
  ASSERT_EQ(a.reference_rc, 0) << a.reference_text;
  ASSERT_TRUE(a.report.is_object()) << "no report.json";
  ASSERT_TRUE(a.reference.is_object()) << a.reference_text;
  const auto t4 = report_rows(a.report, "table4_primary");
  ASSERT_EQ(t4.size(), a.reference["labels"].size()) << a.report_md;
  ASSERT_GE(t4.size(), 1u);
  ASSERT_EQ(a.reference["triplets"].get<int>(), triplets);
  for (std::size_t k = 0; k < t4.size(); ++k) {
    SCOPED_TRACE(a.reference["labels"][k].get<std::string>());
    EXPECT_EQ(t4[k]["comparison"], a.reference["labels"][k]);
    EXPECT_EQ(t4[k]["triplets"].get<int>(), triplets);
    const double est = t4[k]["ratio"].get<double>(), ref = a.reference["estimate"][k].get<double>();
    EXPECT_NEAR(est / ref, 1.0, 1e-9) << "product " << est << " reference " << ref;
    for (const auto& [col, key] : {std::pair{"ratio_lower", "lower"}, std::pair{"ratio_upper", "upper"}}) {
      const double p = t4[k][col].get<double>(), r = a.reference[key][k].get<double>();
      if (bound_tol == 0) EXPECT_NEAR(p / r, 1.0, 1e-9) << col << ": product " << p << " reference " << r;
      else EXPECT_LE(std::abs(std::log(p) - std::log(r)), bound_tol) << col << ": product " << p << " reference " << r;
    }
  }
  const auto oc = report_rows(a.report, "outcome_counts");
  ASSERT_EQ(oc.size(), a.reference["counts"].size()) << a.report_md;
  for (const auto& row : oc) {
    const std::string conf = row["configuration"].get<std::string>();
    SCOPED_TRACE(conf);
    const auto& ref = a.reference["counts"][conf];
    EXPECT_EQ(row["cases"].get<int>(), ref["completed"].get<int>() + ref["lost"].get<int>());
    EXPECT_EQ(row["censored_requests_compute"], ref["censored_requests"]["compute"]);
    EXPECT_EQ(row["censored_requests_sqlite"], ref["censored_requests"]["sqlite"]);
    EXPECT_EQ(row["cases_with_truncated_trace"], ref["truncated_traces"]);
    EXPECT_EQ(row["cases_with_censored_p99_lower_bound"], ref["censored_p99"]);
    EXPECT_EQ(row["lost_cases"], ref["lost"]);
    EXPECT_EQ(row["imputed_p99_values"], ref["imputed_p99"]);
  }
  const auto t5 = report_rows(a.report, "table5_wake_service");
  ASSERT_EQ(t5.size(), 2 * a.reference["counts"].size()) << a.report_md;
  for (const auto& row : t5) {
    const std::string conf = row["configuration"].get<std::string>(), can = row["canary"].get<std::string>();
    SCOPED_TRACE(conf + " " + can);
    const auto& ref = a.reference["counts"][conf];
    EXPECT_EQ(row["deadline_misses_sum"], ref["deadline_misses"][can]);
    EXPECT_EQ(row["requests_sum"], ref["requests"][can]);
  }
}

}  // namespace test_support
