// HTML report (see report_html.hpp).
#include "analysis/report/report_html.hpp"

#include "harness/xml/text.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace analysis {
namespace {

// HTML text: the shared XML escaping (& < > " ' as entities, control bytes visible), valid HTML5.
std::string escape(const std::string& s) { return harness::xml::xml_text(s); }

// Escaped text with the report's inline Markdown (**bold**, `code`) rendered.
std::string inline_md(const std::string& s) {
  std::string o = escape(s);
  o = std::regex_replace(o, std::regex(R"(\*\*([^*]+)\*\*)"), "<strong>$1</strong>");
  o = std::regex_replace(o, std::regex("`([^`]+)`"), "<code>$1</code>");
  return o;
}

std::string cell(const nlohmann::json& c, int decimals) {
  if (c.is_null()) return "n/a";
  if (c.is_string()) return escape(c.get<std::string>());
  if (c.is_number_integer() || c.is_number_unsigned()) return c.dump();
  if (c.is_number_float()) return fmt::format("{:.{}f}", c.get<double>(), decimals);
  if (c.is_boolean()) return c.get<bool>() ? "yes" : "no";
  return escape(c.dump());
}

constexpr const char* kStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:2em;border-bottom:1px solid #ddd}
.prov{background:#f6f8fa;border:1px solid #ddd;padding:.5em 1em;font-size:.9em}
.warn{background:#fff4e5;border-left:4px solid #e69500;padding:.5em 1em}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}th,td{border:1px solid #ccc;padding:3px 6px}
th{background:#f0f0f0}td.n{text-align:right;font-variant-numeric:tabular-nums}
.note{font-size:.85em;color:#444}figure{margin:1em 0}figure img{max-width:100%;border:1px solid #eee}
figcaption{font-size:.85em;color:#555}
)";

}  // namespace

std::string base64(const std::string& bytes) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string o;
  o.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) | (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                       static_cast<unsigned char>(bytes[i + 2]);
    o += k[v >> 18];
    o += k[(v >> 12) & 63];
    o += k[(v >> 6) & 63];
    o += k[v & 63];
  }
  if (i < bytes.size()) {
    unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    o += k[v >> 18];
    o += k[(v >> 12) & 63];
    o += i + 1 < bytes.size() ? k[(v >> 6) & 63] : '=';
    o += '=';
  }
  return o;
}

std::string render_html(const Report& r) {
  // A synthetic report says so on the file's first line too (a comment after the doctype).
  std::string o = "<!DOCTYPE html>" +
                  (is_synthetic(r) ? "<!-- " + escape(results::synthetic_banner()) + " -->" : std::string()) +
                  "\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" + escape(shown_title(r)) +
                  "</title>\n<style>" + kStyle + "</style></head><body>\n";
  o += "<h1>" + escape(shown_title(r)) + "</h1>\n";
  if (r.provenance) {
    o += "<div class=\"prov\"><ul>\n";
    std::istringstream in(results::provenance_markdown(*r.provenance));
    for (std::string line; std::getline(in, line);)
      if (line.rfind("- ", 0) == 0) o += "<li>" + inline_md(line.substr(2)) + "</li>\n";
    o += "</ul></div>\n";
  }
  if (const auto warnings = shown_warnings(r); !warnings.empty()) {
    o += "<h2>Warnings</h2>\n<div class=\"warn\"><ul>\n";
    for (const auto& w : warnings) o += "<li>" + inline_md(w) + "</li>\n";
    o += "</ul></div>\n";
  }
  for (const auto& p : r.summary) o += "<p>" + inline_md(p) + "</p>\n";
  if (!r.figures.empty()) {
    o += "<h2>Figures</h2>\n";
    for (const auto& f : r.figures) {
      const std::string name = std::filesystem::path(f).filename().string();
      std::ifstream in(f, std::ios::binary);
      std::ostringstream bytes;
      bytes << in.rdbuf();
      if (!in || bytes.str().empty()) {
        o += "<p class=\"warn\">figure " + escape(name) + " could not be read from " + escape(f) + "</p>\n";
        continue;
      }
      o += "<figure><img alt=\"" + escape(name) + "\" src=\"data:image/png;base64," + base64(bytes.str()) +
           "\"><figcaption>" + escape(name) + "</figcaption></figure>\n";
    }
  }
  for (const auto& t : r.tables) {
    o += "<h2 id=\"" + escape(t.id) + "\">" + escape(t.title) + "</h2>\n<table><thead><tr>";
    for (const auto& c : t.columns) o += "<th title=\"" + escape(column_name(c)) + "\">" + escape(c.header) + "</th>";
    o += "</tr></thead><tbody>\n";
    for (const auto& row : t.rows) {
      o += "<tr>";
      for (std::size_t j = 0; j < row.size(); ++j)
        o += std::string(row[j].is_number() ? "<td class=\"n\">" : "<td>") + cell(row[j], t.columns[j].decimals) + "</td>";
      o += "</tr>\n";
    }
    o += "</tbody></table>\n";
    for (const auto& n : t.notes) o += "<p class=\"note\">" + inline_md(n) + "</p>\n";
  }
  o += "</body></html>\n";
  return o;
}

}  // namespace analysis
