#pragma once
// The column of a report table by its header, the text a reader sees ("bg PSI some stall (s)"),
// for tests that pin the headers themselves; by CSV name, use analysis::column_index.
// Header-only; include as "tests/common/header_index.hpp".
#include "analysis/report/report_table.hpp"

#include <cstddef>
#include <stdexcept>
#include <string>

namespace test_support {

/// Index of the column of `t` whose header is `header`. Throws std::runtime_error naming the
/// table and the header when there is none (the test fails there, not on a wrong cell).
inline std::size_t header_index(const analysis::Table& t, const std::string& header) {
  for (std::size_t j = 0; j < t.columns.size(); ++j)
    if (t.columns[j].header == header) return j;
  throw std::runtime_error("table " + t.id + " has no column headed '" + header + "'");
}

}  // namespace test_support
