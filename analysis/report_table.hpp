#pragma once
// A report = warnings, a verdict paragraph and tables; rendered as Markdown (for a person),
// CSV (one file per table) and JSON. A missing value is JSON null and prints as "n/a": a table
// never shows NaN (non-finite numbers are rejected when a cell is set).
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace analysis {

/// A column: header (with its unit, e.g. "p99 (us)") and the decimals used in Markdown.
struct Column {
  std::string header;
  int decimals = 3;
};

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

/// Number cell, or null when absent/non-finite is impossible by construction (throws instead).
nlohmann::json num(double v);

/// Cell text for a quantity whose column or outcome_json key is absent (results/schema.sql: NULL
/// means "not measured", never zero).
inline constexpr const char* kNotMeasured = "not measured";

/// Median (type 7) of the present, finite values as a number cell; `absent` when there is none.
nlohmann::json median_cell(const std::vector<std::optional<double>>& values, const nlohmann::json& absent = nullptr);

/// The whole report.
struct Report {
  std::string title;
  std::vector<std::string> warnings;   ///< shown first
  std::vector<std::string> summary;    ///< paragraphs (verdict in words, design diagnostic)
  std::vector<Table> tables;
  nlohmann::json extra;                ///< machine-readable extras (JSON output only)
};

/// Markdown: title, warnings, summary, then each table with aligned columns and its notes.
std::string render_markdown(const Report& r);
/// CSV text of one table (header row, RFC 4180 quoting, numbers in full precision).
std::string render_csv(const Table& t);
/// JSON object {title, warnings, summary, tables:[{id,title,columns,rows,notes}], extra}.
nlohmann::json render_json(const Report& r);
/// Writes report.md, report.json and <table id>.csv into `dir` (created). Errors: std::runtime_error
/// naming the file that could not be written.
void write_report_files(const Report& r, const std::string& dir);

}  // namespace analysis
