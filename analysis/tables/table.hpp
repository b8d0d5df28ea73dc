#pragma once
// A table and a report as data: the columns (header with its unit, Markdown decimals, tidy
// CSV/JSON name, the side a column repeats for), the rows of JSON cells, the notes; a report's
// provenance, warnings, summary, tables, machine-readable extras and whether it was made from a
// synthetic DB. The study's tables (tables/), the comparisons (compare/) and the renderers
// (report/report_table.hpp: Markdown, CSV, JSON; report/report_html.hpp) share these types. A
// missing value is JSON null and prints as "n/a": a table never holds NaN (non-finite numbers are
// rejected when a cell is set).
#include "results/provenance.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
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
  /// For a table whose columns repeat per side (`harness compare`: A, B, ...): the side (0 =
  /// A) and the column's header without the side's name ("ratio", "/ A"); unset = a key column
  /// shown on every side's line. Used only to render a too-wide table narrower (render_markdown).
  std::optional<std::size_t> side{};
  std::string quantity{};
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
  /// The names of the sides its columns repeat for (Column::side indexes them), e.g. {"A", "B"}.
  std::vector<std::string> side_names{};
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
  /// Made (also) from a synthetic DB (analysis/simulate/synthetic.hpp), e.g. one side of a comparison;
  /// a report whose provenance says synthetic is one too (is_synthetic).
  bool synthetic = false;
  /// Widest Markdown line, in characters (0 = no limit; ours, issue 59: `harness compare` sets
  /// kTerminalWidth). Prose is wrapped to it; a table wider than it is rendered narrower
  /// (render_markdown).
  std::size_t markdown_width = 0;
};

/// The width `harness compare` keeps its Markdown within, characters (ours, issue 59).
inline constexpr std::size_t kTerminalWidth = 120;

/// Whether `r` was made from a synthetic DB: r.synthetic, or r.provenance->synthetic. Every
/// rendering of such a report says SYNTHETIC on its first line (results::synthetic_banner).
bool is_synthetic(const Report& r);

/// The title and the warnings as every rendering shows them: a synthetic report's title prefixed
/// "SYNTHETIC DATA: " and results::synthetic_banner() its first warning; else as they are.
std::string shown_title(const Report& r);
std::vector<std::string> shown_warnings(const Report& r);

}  // namespace analysis
