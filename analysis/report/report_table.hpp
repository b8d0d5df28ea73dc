#pragma once
// A report (analysis/tables/table.hpp: provenance, warnings, a verdict paragraph and tables)
// rendered as Markdown (for a person), CSV (one file per table, each with a provenance
// sidecar), JSON and a self-contained HTML page (report_html.hpp). A missing value prints as
// "n/a".
#include "analysis/tables/table.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace analysis {

/// Markdown: title, provenance, warnings, summary, then each table with aligned columns and its
/// notes. A synthetic report's title line starts "# SYNTHETIC DATA: " and its first warning is
/// results::synthetic_banner(). With r.markdown_width (ours, issue 59), no line is wider than
/// that (but a single word or table cell that is wider): prose is wrapped at spaces, and a table
/// too wide is rendered, when its columns are grouped by side (Column::side), as small tables
/// with a line per side (one per row; with two or more key columns, one per value of the keys
/// but the last, whose lines it leads), else as one list item per row ("header: value; ..."),
/// wrapped.
std::string render_markdown(const Report& r);
/// CSV text of one table (header row of column_name()s, RFC 4180 quoting, numbers in full precision).
std::string render_csv(const Table& t);
/// JSON object {title, provenance, warnings, summary, tables:[{id,title,columns,column_names,rows,notes}],
/// extra}; columns are the headers, column_names the CSV names. Title and warnings as rendered
/// (a synthetic report's prefixed and with the banner first).
nlohmann::json render_json(const Report& r);
/// report.json's text: render_json(r) with 2-space indentation and a final newline; a synthetic
/// report's first line is `{"synthetic": "<results::synthetic_banner()>",` (the key absent
/// otherwise), so that the file says so before anything else.
std::string render_json_text(const Report& r);
/// Writes report.md, report.json, report.html (figures embedded) and <table id>.csv into `dir`
/// (created), plus <table id>.csv.meta.json and report.json's provenance when r.provenance is set.
/// Errors: std::runtime_error naming the file that could not be written.
void write_report_files(const Report& r, const std::string& dir);

}  // namespace analysis
