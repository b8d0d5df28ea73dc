// A table and a report as data (see table.hpp).
#include "analysis/tables/table.hpp"

#include "analysis/stats/quantile.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <stdexcept>

namespace analysis {

nlohmann::json num(double v) {
  if (!std::isfinite(v)) throw std::invalid_argument("report: non-finite number in a table cell");
  return v;
}

nlohmann::json median_cell(const std::vector<std::optional<double>>& values, const nlohmann::json& absent) {
  std::vector<double> x;
  for (const auto& o : values)
    if (o && std::isfinite(*o)) x.push_back(*o);
  if (x.empty()) return absent;
  return num(median(x));
}

void Table::add(std::vector<nlohmann::json> row) {
  if (row.size() != columns.size())
    throw std::invalid_argument(fmt::format("report: {} row has {} cells for {} columns", id, row.size(), columns.size()));
  for (const auto& c : row)
    if (c.is_number_float() && !std::isfinite(c.get<double>()))
      throw std::invalid_argument(fmt::format("report: non-finite number in table {}", id));
  rows.push_back(std::move(row));
}

std::string tidy_name(const std::string& header) {
  static const std::pair<const char*, const char*> kUnits[] = {
      {"(us)", "us"}, {"(ms)", "ms"}, {"(s)", "s"}, {"(MiB)", "mib"}, {"(KiB)", "kib"}, {"(MiB/s)", "mib_s"},
      {"(%)", "pct"}, {"(B)", "bytes"}, {"(bytes)", "bytes"}};
  std::string h = header, suffix;
  for (const auto& [u, s] : kUnits) {
    const std::string unit(u);
    if (h.size() >= unit.size() && h.compare(h.size() - unit.size(), unit.size(), unit) == 0) {
      h.resize(h.size() - unit.size());
      suffix = s;
      break;
    }
  }
  std::string out;
  auto word = [&](const std::string& w) {
    if (w.empty()) return;
    if (!out.empty() && out.back() != '_') out += '_';
    out += w;
  };
  std::string cur;
  for (char ch : h) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (std::isalnum(c)) {
      cur += static_cast<char>(std::tolower(c));
    } else {
      word(cur);
      cur.clear();
      if (ch == '%') word("pct");
    }
  }
  word(cur);
  word(suffix);
  if (out.empty() || !std::isalpha(static_cast<unsigned char>(out[0]))) out = "col_" + out;
  return out;
}

std::string column_name(const Column& c) { return c.name.empty() ? tidy_name(c.header) : c.name; }

std::size_t column_index(const Table& t, const std::string& name) {
  for (std::size_t j = 0; j < t.columns.size(); ++j)
    if (column_name(t.columns[j]) == name) return j;
  throw std::invalid_argument("table " + t.id + " has no column " + name);
}

bool is_synthetic(const Report& r) { return r.synthetic || (r.provenance && r.provenance->synthetic); }

std::string shown_title(const Report& r) { return is_synthetic(r) ? "SYNTHETIC DATA: " + r.title : r.title; }

std::vector<std::string> shown_warnings(const Report& r) {
  std::vector<std::string> w;
  if (is_synthetic(r)) w.push_back(results::synthetic_banner());
  w.insert(w.end(), r.warnings.begin(), r.warnings.end());
  return w;
}

}  // namespace analysis
