// Report rendering (see report_table.hpp).
#include "analysis/report/report_table.hpp"
#include "harness/json/limited_parse.hpp"

#include "analysis/report/report_html.hpp"
#include "results/csv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace analysis {

namespace {
std::string cell_text(const nlohmann::json& c, int decimals) {
  if (c.is_null()) return "n/a";
  if (c.is_string()) return c.get<std::string>();
  if (c.is_number_integer() || c.is_number_unsigned()) return c.dump();
  if (c.is_number_float()) return fmt::format("{:.{}f}", c.get<double>(), decimals);
  if (c.is_boolean()) return c.get<bool>() ? "yes" : "no";
  return c.dump();
}

/// `text` wrapped at spaces into lines of at most `width` characters (a word longer than that
/// stands alone), the first starting with `first`, the others with `rest`; width 0: one line.
std::string wrapped(const std::string& text, std::size_t width, const std::string& first, const std::string& rest) {
  if (width == 0) return first + text + "\n";
  std::string out, line = first;
  bool empty = true;  // nothing but the prefix on `line` yet
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t j = std::min(text.find(' ', i), text.size());
    const std::string word = text.substr(i, j - i);
    i = j + 1;
    if (word.empty()) continue;
    if (!empty && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = rest, empty = true;
    }
    line += (empty ? "" : " ") + word;
    empty = false;
  }
  return out + line + "\n";
}

/// `items` joined with "; " into lines of at most `width` characters, broken between items;
/// an item wider than a line on its own is wrapped at its spaces (wrapped). The first line
/// starts with `first`, the others with `rest`.
std::string wrapped_items(const std::vector<std::string>& items, std::size_t width, const std::string& first,
                          const std::string& rest) {
  std::string out, line = first;
  bool empty = true;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string item = items[i] + (i + 1 < items.size() ? ";" : "");
    if (!empty && line.size() + 1 + item.size() > width) {
      out += line + "\n";
      line = rest, empty = true;
    }
    if (empty && line.size() + item.size() > width) {  // too wide for any line: wrapped on its own
      const std::string w = wrapped(item, width, line, rest);
      out += w.substr(0, w.rfind('\n', w.size() - 2) + 1);
      line = w.substr(w.rfind('\n', w.size() - 2) + 1);
      line.pop_back();  // its last line stays open for the next item
      empty = false;
      continue;
    }
    line += (empty ? "" : " ") + item;
    empty = false;
  }
  return out + line + "\n";
}

/// A heading of `level` ('#'s) for `title`; with a width the heading wider than it is cut at the
/// title's first ": " or ". " (else at the last space that fits) and the rest follows as a
/// wrapped paragraph in italics.
std::string heading(const std::string& title, const std::string& level, std::size_t width) {
  const std::string line = level + " " + title;
  if (width == 0 || line.size() <= width) return line + "\n\n";
  std::size_t cut = std::min(title.find(": "), title.find(". "));
  if (cut == std::string::npos || level.size() + 1 + cut > width) {
    cut = title.rfind(' ', width - level.size() - 1);
    if (cut == std::string::npos || cut == 0) return line + "\n\n";
  }
  const std::size_t rest = title.find_first_not_of(":. ", cut);
  return level + " " + title.substr(0, cut) + "\n\n" +
         wrapped("*" + title.substr(rest == std::string::npos ? title.size() : rest) + "*", width, "", "") + "\n";
}

/// The widest line of `text`, characters (bytes: the tables are ASCII but for a few symbols).
std::size_t widest_line(const std::string& text) {
  std::size_t w = 0, start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    w = std::max(w, end - start);
    start = end + 1;
  }
  return w;
}

/// An aligned Markdown table of `headers` and `cells` (numeric columns right-aligned).
std::string aligned_table(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& cells,
                          const std::vector<bool>& numeric) {
  std::vector<std::size_t> width(headers.size());
  for (std::size_t j = 0; j < headers.size(); ++j) width[j] = headers[j].size();
  for (const auto& line : cells)
    for (std::size_t j = 0; j < line.size(); ++j) width[j] = std::max(width[j], line[j].size());
  auto pad = [&](const std::string& s, std::size_t j) {
    return numeric[j] ? fmt::format("{:>{}}", s, width[j]) : fmt::format("{:<{}}", s, width[j]);
  };
  std::string o = "|";
  for (std::size_t j = 0; j < headers.size(); ++j) o += " " + pad(headers[j], j) + " |";
  o += "\n|";
  for (std::size_t j = 0; j < headers.size(); ++j)
    o += (numeric[j] ? std::string(width[j] + 1, '-') + ":|" : ":" + std::string(width[j] + 1, '-') + "|");
  o += "\n";
  for (const auto& line : cells) {
    o += "|";
    for (std::size_t j = 0; j < line.size(); ++j) o += " " + pad(line[j], j) + " |";
    o += "\n";
  }
  return o;
}

/// Table t's cells as text, and which columns hold no text (right-aligned).
struct TableText {
  std::vector<std::vector<std::string>> cells;
  std::vector<bool> numeric;
};

TableText table_text(const Table& t) {
  TableText x{{}, std::vector<bool>(t.columns.size(), true)};
  for (const auto& row : t.rows) {
    std::vector<std::string> line;
    for (std::size_t j = 0; j < row.size(); ++j) {
      line.push_back(cell_text(row[j], t.columns[j].decimals));
      if (row[j].is_string()) x.numeric[j] = false;
    }
    x.cells.push_back(std::move(line));
  }
  return x;
}

/// The table as one aligned Markdown table.
std::string wide_table(const Table& t, const TableText& x) {
  std::vector<std::string> headers;
  for (const auto& c : t.columns) headers.push_back(c.header);
  return aligned_table(headers, x.cells, x.numeric);
}

/// One line per side of row `r` of a side-grouped table: `lead` cells first, then the side's
/// name and its cells of `quantities` (blank where the side has no such column).
void side_lines(const Table& t, const TableText& x, std::size_t r, const std::vector<std::string>& lead,
                const std::vector<std::string>& quantities, std::vector<std::vector<std::string>>& lines,
                std::vector<bool>& numeric) {
  for (std::size_t s = 0; s < t.side_names.size(); ++s) {
    std::vector<std::string> line = lead;
    line.push_back(t.side_names[s]);
    line.resize(lead.size() + 1 + quantities.size());
    for (std::size_t j = 0; j < t.columns.size(); ++j) {
      const Column& c = t.columns[j];
      if (!c.side || *c.side != s) continue;
      const std::size_t q = lead.size() + 1 +
          static_cast<std::size_t>(std::find(quantities.begin(), quantities.end(), c.quantity) - quantities.begin());
      line[q] = x.cells[r][j];
      if (!x.numeric[j]) numeric[q] = false;
    }
    lines.push_back(std::move(line));
  }
}

/// A table whose columns repeat per side, as small tables with a line per side (issue 59: one
/// table per metric). One key column: a table per row, headed by its key in bold. More: a table
/// per value of the keys but the last (in bold), whose lines start with the last key's cell.
std::string side_tables(const Table& t, const TableText& x) {
  std::vector<std::size_t> keys;
  std::vector<std::string> quantities;  // in order of first appearance
  for (std::size_t j = 0; j < t.columns.size(); ++j) {
    if (!t.columns[j].side) keys.push_back(j);
    else if (std::find(quantities.begin(), quantities.end(), t.columns[j].quantity) == quantities.end())
      quantities.push_back(t.columns[j].quantity);
  }
  const bool inner = keys.size() >= 2;  // the last key leads each line
  std::vector<std::string> headers;
  if (inner) headers.push_back(t.columns[keys.back()].header);
  headers.push_back("side");
  headers.insert(headers.end(), quantities.begin(), quantities.end());
  std::string o;
  for (std::size_t r = 0; r < t.rows.size();) {
    auto group_of = [&](std::size_t row) {
      std::string g;
      for (std::size_t k = 0; k + (inner ? 1 : 0) < keys.size(); ++k) g += (k ? ", " : "") + x.cells[row][keys[k]];
      return g;
    };
    const std::string group = group_of(r);
    std::vector<std::vector<std::string>> lines;
    std::vector<bool> numeric(headers.size(), true);
    numeric[0] = false, numeric[inner ? 1 : 0] = false;
    do {
      side_lines(t, x, r, inner ? std::vector<std::string>{x.cells[r][keys.back()]} : std::vector<std::string>{},
                 quantities, lines, numeric);
      ++r;
    } while (inner && r < t.rows.size() && group_of(r) == group);
    o += (o.empty() ? "" : "\n") + ("**" + group + "**\n\n") + aligned_table(headers, lines, numeric);
  }
  return o;
}

/// The table as a list, one item per row: "header: value" joined with "; ", wrapped at `width`
/// between them.
std::string record_list(const Table& t, const TableText& x, std::size_t width) {
  std::string o;
  for (const auto& line : x.cells) {
    std::vector<std::string> items;
    for (std::size_t j = 0; j < line.size(); ++j) items.push_back(t.columns[j].header + ": " + line[j]);
    o += wrapped_items(items, width, "- ", "  ");
  }
  return o;
}

/// One table's Markdown body (no title, no notes), within `width` when it can be (0: no limit).
std::string table_markdown(const Table& t, std::size_t width) {
  const TableText x = table_text(t);
  std::string o = wide_table(t, x);
  if (width == 0 || widest_line(o) <= width) return o;
  if (!t.side_names.empty()) {
    o = side_tables(t, x);
    if (widest_line(o) <= width) return o;
  }
  return record_list(t, x, width);
}

}  // namespace

std::string render_markdown(const Report& r) {
  const std::size_t width = r.markdown_width;
  std::string o = heading(shown_title(r), "#", width);
  if (r.provenance) {  // a bullet list: each item wrapped
    std::istringstream in(results::provenance_markdown(*r.provenance));
    for (std::string line; std::getline(in, line);)
      o += line.rfind("- ", 0) == 0 ? wrapped(line.substr(2), width, "- ", "  ") : line + "\n";
    o += "\n";
  }
  if (const auto warnings = shown_warnings(r); !warnings.empty()) {
    o += "## Warnings\n\n";
    for (const auto& w : warnings) o += wrapped("**" + w + "**", width, "- ", "  ");
    o += "\n";
  }
  for (const auto& p : r.summary) o += wrapped(p, width, "", "") + "\n";
  for (const auto& t : r.tables) {
    o += heading(t.title, "##", width) + table_markdown(t, width);
    for (const auto& n : t.notes) o += "\n" + wrapped(n, width, "", "");
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
  nlohmann::json j = {{"title", shown_title(r)}, {"warnings", shown_warnings(r)}, {"summary", r.summary}};
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

std::string render_json_text(const Report& r) {
  const std::string text = render_json(r).dump(2) + "\n";
  if (!is_synthetic(r)) return text;
  // "{\n  ..." -> "{\"synthetic\": \"...\",\n  ...": the banner on the file's first line.
  return "{\"synthetic\": " + nlohmann::json(results::synthetic_banner()).dump() + "," + text.substr(1);
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
  put("report.json", render_json_text(r));
  put("report.html", render_html(r));
  for (const auto& t : r.tables) {
    put(t.id + ".csv", render_csv(t));
    if (r.provenance) results::write_sidecar((std::filesystem::path(dir) / (t.id + ".csv")).string(), *r.provenance);
  }
}

}  // namespace analysis
