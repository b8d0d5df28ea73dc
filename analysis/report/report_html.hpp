#pragma once
// Self-contained HTML rendering of a report (report.html, for sharing): one file, no external
// resources; figures embedded as base64 PNG data URIs; provenance, warnings, summary and every
// table with its notes, as in report.md.
#include "analysis/tables/table.hpp"

#include <string>

namespace analysis {

/// The page. Figures are read from r.figures (PNG paths); a figure that cannot be read is
/// named in the page instead of embedded (never a broken link). Text is HTML-escaped; the
/// Markdown used in warnings and summaries (**bold**, `code`) is rendered.
std::string render_html(const Report& r);

/// RFC 4648 base64 of `bytes` (no line breaks).
std::string base64(const std::string& bytes);

}  // namespace analysis
