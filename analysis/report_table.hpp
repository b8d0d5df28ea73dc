#pragma once
// A report = provenance, warnings, a verdict paragraph and tables; rendered as Markdown (for a
// person), CSV (one file per table, each with a provenance sidecar), JSON and a self-contained
// HTML page (report_html.hpp). A missing value is JSON null and prints as "n/a": a table never
// shows NaN (non-finite numbers are rejected when a cell is set).
#include "results/provenance.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace analysis {

/// A column: header for people (with its unit, e.g. "p99 (ms)"), the decimals used in Markdown,
/// and the machine name used as CSV header and JSON column name (snake_case, unit as suffix:
/// "p99_ms", "ratio_lower"); empty = derived from the header by tidy_name().
struct Column {
  std::string header;
  int decimals = 3;
  std::string name{};
};

/// Tidy (R / pandas friendly) column name from a header: lowercase ASCII letters, digits and
/// '_', starting with a letter; a trailing unit in parentheses becomes a suffix
/// ("wake p50 (ms)" -> "wake_p50_ms", "rate (MiB/s)" -> "rate_mib_s", "change (%)" -> "change_pct").
std::string tidy_name(const std::string& header);

/// The column's CSV/JSON name: Column::name, else tidy_name(header).
std::string column_name(const Column& c);

/// One table. Cells are JSON numbers, strings or null.
struct Table {
  std::string id;      ///< file stem for CSV, e.g. "table4_primary"
  std::string title;   ///< e.g. "Table 4. Primary comparisons"
  std::vector<Column> columns;
  std::vector<std::vector<nlohmann::json>> rows;
  std::vector<std::string> notes;
  /// Appends a row; std::invalid_argument if its size differs from columns or a number is not finite.
  void add(std::vector<nlohmann::json> row);
};

/// Index of the column of `t` whose CSV name (column_name) is `name`: the one lookup of a
/// column by name (compare, compare_published, the tests). Errors: std::invalid_argument
/// naming the table and the column.
std::size_t column_index(const Table& t, const std::string& name);

/// Number cell, or null when absent/non-finite is impossible by construction (throws instead).
nlohmann::json num(double v);

/// Cell text for a quantity whose column or outcome_json key is absent (results/schema.sql: NULL
/// means "not measured", never zero).
inline constexpr const char* kNotMeasured = "not measured";

/// Bytes in one MiB, as a double: a cell in MiB is bytes / kMiB.
inline constexpr double kMiB = 1048576.0;

/// Median (type 7) of the present, finite values as a number cell; `absent` when there is none.
nlohmann::json median_cell(const std::vector<std::optional<double>>& values, const nlohmann::json& absent = nullptr);

/// The whole report.
struct Report {
  std::string title;
  /// Who made it from what (results/provenance.hpp): shown on top of report.md/html, as
  /// "provenance" in report.json and in every CSV's sidecar (<file>.csv.meta.json). Unset: omitted.
  std::optional<results::Provenance> provenance;
  std::vector<std::string> figures;    ///< PNG paths embedded in report.html (in this order)
  std::vector<std::string> warnings;   ///< shown first
  std::vector<std::string> summary;    ///< paragraphs (verdict in words, design diagnostic)
  std::vector<Table> tables;
  nlohmann::json extra;                ///< machine-readable extras (JSON output only)
};

/// Markdown: title, provenance, warnings, summary, then each table with aligned columns and its notes.
std::string render_markdown(const Report& r);
/// CSV text of one table (header row of column_name()s, RFC 4180 quoting, numbers in full precision).
std::string render_csv(const Table& t);
/// JSON object {title, provenance, warnings, summary, tables:[{id,title,columns,column_names,rows,notes}],
/// extra}; columns are the headers, column_names the CSV names.
nlohmann::json render_json(const Report& r);
/// Writes report.md, report.json, report.html (figures embedded) and <table id>.csv into `dir`
/// (created), plus <table id>.csv.meta.json and report.json's provenance when r.provenance is set.
/// Errors: std::runtime_error naming the file that could not be written.
void write_report_files(const Report& r, const std::string& dir);

}  // namespace analysis
