// PSI parser (psi.hpp).
#include "harness/kernel/psi.hpp"

#include <charconv>
#include <map>

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

PsiLine parse_line(const std::vector<std::string_view>& words, const std::string& kind,
                   const std::string& file, int line) {
  std::map<std::string, std::string_view> kv;
  for (size_t i = 1; i < words.size(); ++i) {
    auto eq = words[i].find('=');
    if (eq == std::string_view::npos || eq == 0)
      throw ParseError(file, line, kind, "expected key=value, got '" + std::string(words[i]) + "'");
    kv[std::string(words[i].substr(0, eq))] = words[i].substr(eq + 1);
  }
  auto need = [&](const char* k) -> std::string_view {
    auto it = kv.find(k);
    if (it == kv.end()) throw ParseError(file, line, kind + "." + k, "missing");
    return it->second;
  };
  PsiLine p;
  p.avg10 = parse_avg(need("avg10"), file, line, kind + ".avg10");
  p.avg60 = parse_avg(need("avg60"), file, line, kind + ".avg60");
  p.avg300 = parse_avg(need("avg300"), file, line, kind + ".avg300");
  p.total_us = parse_u64(need("total"), file, line, kind + ".total");
  return p;
}

}  // namespace

Psi parse_psi(std::string_view text, const std::string& file) {
  Psi out;
  bool have_some = false;
  int lineno = 0;
  for (std::string_view line : split_lines(text)) {
    ++lineno;
    auto words = split_ws(line);
    if (words.empty()) continue;
    std::string kind(words[0]);
    if (kind == "some") {
      if (have_some) throw ParseError(file, lineno, "some", "duplicate line");
      out.some = parse_line(words, kind, file, lineno);
      have_some = true;
    } else if (kind == "full") {
      if (out.full) throw ParseError(file, lineno, "full", "duplicate line");
      out.full = parse_line(words, kind, file, lineno);
    } else {
      throw ParseError(file, lineno, kind, "unknown PSI line kind (expected 'some' or 'full')");
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
