// PSI parser (psi.hpp).
#include "harness/kernel/psi.hpp"

#include <charconv>

#include "harness/kernel/errors.hpp"
#include "harness/kernel/fs.hpp"
#include "harness/kernel/keyed.hpp"
#include "harness/kernel/text.hpp"

namespace harness::kernel {
namespace {

double parse_avg(std::string_view s, const std::string& file, int line, const std::string& field) {
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || v < 0)
    throw ParseError(file, line, field, "expected a non-negative decimal, got '" + std::string(s) + "'");
  return v;
}

// The key=value words after the kind of one line; the last of a repeated key counts.
PsiLine parse_line(std::string_view rest, const char* kind, const std::string& file, int line) {
  std::string_view avg10, avg60, avg300, total, w;
  bool have[4] = {false, false, false, false};
  while (next_word(rest, w)) {
    const auto eq = w.find('=');
    if (eq == std::string_view::npos || eq == 0)
      throw ParseError(file, line, kind, "expected key=value, got '" + std::string(w) + "'");
    const auto k = w.substr(0, eq), v = w.substr(eq + 1);
    if (k == "avg10") avg10 = v, have[0] = true;
    else if (k == "avg60") avg60 = v, have[1] = true;
    else if (k == "avg300") avg300 = v, have[2] = true;
    else if (k == "total") total = v, have[3] = true;
  }
  static const char* names[] = {"avg10", "avg60", "avg300", "total"};
  for (int i = 0; i < 4; ++i)
    if (!have[i]) throw ParseError(file, line, std::string(kind) + "." + names[i], "missing");
  PsiLine p;
  p.avg10 = parse_avg(avg10, file, line, std::string(kind) + ".avg10");
  p.avg60 = parse_avg(avg60, file, line, std::string(kind) + ".avg60");
  p.avg300 = parse_avg(avg300, file, line, std::string(kind) + ".avg300");
  p.total_us = parse_u64(total, file, line, std::string(kind) + ".total");  // short: no heap
  return p;
}

}  // namespace

Psi parse_psi(std::string_view text, const std::string& file) {
  Psi out;
  bool have_some = false;
  int lineno = 0;
  std::string_view line, kind;
  while (next_line(text, line)) {
    ++lineno;
    if (!next_word(line, kind)) continue;
    if (kind == "some") {
      if (have_some) throw ParseError(file, lineno, "some", "duplicate line");
      out.some = parse_line(line, "some", file, lineno);
      have_some = true;
    } else if (kind == "full") {
      if (out.full) throw ParseError(file, lineno, "full", "duplicate line");
      out.full = parse_line(line, "full", file, lineno);
    } else {
      throw ParseError(file, lineno, std::string(kind), "unknown PSI line kind (expected 'some' or 'full')");
    }
  }
  if (!have_some) throw ParseError(file, 0, "some", "no 'some' line");
  return out;
}

Psi read_system_psi(const Fs& fs, PsiResource r) {
  const char* rel = r == PsiResource::Memory ? "proc/pressure/memory"
                    : r == PsiResource::Io   ? "proc/pressure/io"
                                             : "proc/pressure/cpu";
  return parse_psi(fs.read(rel), fs.path(rel).string());
}

}  // namespace harness::kernel
