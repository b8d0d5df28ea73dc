// Report rendering (see report_table.hpp).
#include "analysis/report_table.hpp"
#include "harness/json/limited_parse.hpp"

#include "analysis/quantile.hpp"
#include "analysis/report_html.hpp"
#include "results/csv.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
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

namespace {
std::string cell_text(const nlohmann::json& c, int decimals) {
  if (c.is_null()) return "n/a";
  if (c.is_string()) return c.get<std::string>();
  if (c.is_number_integer() || c.is_number_unsigned()) return c.dump();
  if (c.is_number_float()) return fmt::format("{:.{}f}", c.get<double>(), decimals);
  if (c.is_boolean()) return c.get<bool>() ? "yes" : "no";
  return c.dump();
}
}  // namespace

std::string render_markdown(const Report& r) {
  std::string o = "# " + r.title + "\n\n";
  if (r.provenance) o += results::provenance_markdown(*r.provenance) + "\n";
  if (!r.warnings.empty()) {
    o += "## Warnings\n\n";
    for (const auto& w : r.warnings) o += "- **" + w + "**\n";
    o += "\n";
  }
  for (const auto& p : r.summary) o += p + "\n\n";
  for (const auto& t : r.tables) {
    o += "## " + t.title + "\n\n";
    std::vector<std::vector<std::string>> cells;
    std::vector<std::size_t> width(t.columns.size());
    std::vector<bool> numeric(t.columns.size(), true);
    for (std::size_t j = 0; j < t.columns.size(); ++j) width[j] = t.columns[j].header.size();
    for (const auto& row : t.rows) {
      std::vector<std::string> line;
      for (std::size_t j = 0; j < row.size(); ++j) {
        line.push_back(cell_text(row[j], t.columns[j].decimals));
        if (row[j].is_string()) numeric[j] = false;
        width[j] = std::max(width[j], line.back().size());
      }
      cells.push_back(std::move(line));
    }
    auto pad = [&](const std::string& s, std::size_t j) {
      return numeric[j] ? fmt::format("{:>{}}", s, width[j]) : fmt::format("{:<{}}", s, width[j]);
    };
    o += "|";
    for (std::size_t j = 0; j < t.columns.size(); ++j) o += " " + pad(t.columns[j].header, j) + " |";
    o += "\n|";
    for (std::size_t j = 0; j < t.columns.size(); ++j)
      o += (numeric[j] ? std::string(width[j] + 1, '-') + ":|" : ":" + std::string(width[j] + 1, '-') + "|");
    o += "\n";
    for (const auto& line : cells) {
      o += "|";
      for (std::size_t j = 0; j < line.size(); ++j) o += " " + pad(line[j], j) + " |";
      o += "\n";
    }
    for (const auto& n : t.notes) o += "\n" + n + "\n";
    o += "\n";
  }
  return o;
}

std::string render_csv(const Table& t) {
  std::string o;
  for (std::size_t j = 0; j < t.columns.size(); ++j) o += (j ? "," : "") + results::csv_field(column_name(t.columns[j]));
  o += "\n";
  for (const auto& row : t.rows) {
    for (std::size_t j = 0; j < row.size(); ++j) {
      std::string s = row[j].is_null() ? "" : row[j].is_string() ? row[j].get<std::string>() : row[j].dump();
      o += (j ? "," : "") + results::csv_field(s);
    }
    o += "\n";
  }
  return o;
}

nlohmann::json render_json(const Report& r) {
  nlohmann::json j = {{"title", r.title}, {"warnings", r.warnings}, {"summary", r.summary}};
  if (r.provenance) j["provenance"] = harness::json::parse(results::provenance_json(*r.provenance), "provenance");
  j["tables"] = nlohmann::json::array();
  for (const auto& t : r.tables) {
    nlohmann::json cols = nlohmann::json::array(), names = nlohmann::json::array();
    for (const auto& c : t.columns) {
      cols.push_back(c.header);
      names.push_back(column_name(c));
    }
    j["tables"].push_back({{"id", t.id}, {"title", t.title}, {"columns", cols}, {"column_names", names},
                           {"rows", t.rows}, {"notes", t.notes}});
  }
  j["extra"] = r.extra.is_null() ? nlohmann::json::object() : r.extra;
  return j;
}

void write_report_files(const Report& r, const std::string& dir) {
  std::filesystem::create_directories(dir);
  auto put = [&](const std::string& name, const std::string& text) {
    const auto p = std::filesystem::path(dir) / name;
    std::ofstream f(p);
    f << text;
    if (!f) throw std::runtime_error("cannot write " + p.string());
  };
  put("report.md", render_markdown(r));
  put("report.json", render_json(r).dump(2) + "\n");
  put("report.html", render_html(r));
  for (const auto& t : r.tables) {
    put(t.id + ".csv", render_csv(t));
    if (r.provenance) results::write_sidecar((std::filesystem::path(dir) / (t.id + ".csv")).string(), *r.provenance);
  }
}

}  // namespace analysis
