#pragma once
// Checks shared by the analysis tests that build reports from golden DBs.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "analysis/report/analysis_report.hpp"

namespace report_checks {

/// Every table cell is a finite number, a string or null (no "nan"/"inf" text either), and
/// the rendered Markdown has no nan/inf cell (warnings may say "+inf" in words: only cells
/// are checked).
inline void expect_no_nan(const analysis::Report& r) {
  for (const auto& t : r.tables)
    for (const auto& row : t.rows)
      for (const auto& c : row) {
        if (c.is_number()) {
          EXPECT_TRUE(std::isfinite(c.get<double>())) << t.id;
        }
        if (c.is_string()) {
          const auto s = c.get<std::string>();
          EXPECT_TRUE(s != "nan" && s != "inf" && s != "-inf") << t.id;
        }
      }
  const std::string md = analysis::render_markdown(r);
  for (const char* bad : {" nan |", " inf |", " -nan |", " NaN |", " -inf |"})
    EXPECT_EQ(md.find(bad), std::string::npos) << bad;
}

/// B = 2000 (above the 1,600 minimum at alpha 0.05), seed 5, 2 threads.
inline analysis::PrimaryOptions small_bootstrap() {
  analysis::PrimaryOptions o;
  o.bootstrap = {2000, 5, 2};
  return o;
}

/// The table of `r` with id `id`; std::runtime_error naming the id when there is none.
inline const analysis::Table& table(const analysis::Report& r, const std::string& id) {
  for (const auto& t : r.tables)
    if (t.id == id) return t;
  throw std::runtime_error("no table " + id);
}

}  // namespace report_checks
