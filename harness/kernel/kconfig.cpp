// Kernel build configuration (kconfig.hpp).
#include "harness/kernel/kconfig.hpp"

#include <zlib.h>

#include "harness/kernel/errors.hpp"
#include "harness/kernel/text.hpp"

namespace harness::kernel {

std::optional<std::string> KernelConfig::get(std::string_view name) const {
  auto it = options.find(std::string(name));
  if (it == options.end()) return std::nullopt;
  return it->second;
}

bool KernelConfig::enabled(std::string_view name) const {
  auto v = get(name);
  return v && (*v == "y" || *v == "m");
}

KernelConfig parse_kernel_config(std::string_view text, const std::string& file) {
  KernelConfig c;
  c.source = file;
  int lineno = 0;
  for (auto line : split_lines(text)) {
    ++lineno;
    auto t = trim(line);
    if (t.empty()) continue;
    if (t.front() == '#') {
      constexpr std::string_view suffix = " is not set";
      if (t.size() > 2 && t.substr(0, 9) == "# CONFIG_" && t.size() > suffix.size() &&
          t.substr(t.size() - suffix.size()) == suffix) {
        // insert_or_assign, not operator=(const char*): GCC 12 -Wrestrict false positive.
        std::string_view name = t.substr(2);
        name.remove_suffix(suffix.size());
        c.options.insert_or_assign(std::string(name.begin(), name.end()), std::string(1, 'n'));
      }
      continue;
    }
    auto eq = t.find('=');
    if (t.substr(0, 7) != "CONFIG_" || eq == std::string_view::npos)
      throw ParseError(file, lineno, std::string(t.substr(0, std::min<size_t>(t.size(), 40))),
                       "expected 'CONFIG_NAME=value' or '# CONFIG_NAME is not set'");
    c.options[std::string(t.substr(0, eq))] = std::string(t.substr(eq + 1));
  }
  return c;
}

namespace {
std::optional<std::string> gunzip_file(const std::string& path) {
  gzFile gz = gzopen(path.c_str(), "rb");
  if (!gz) return std::nullopt;
  std::string out;
  char buf[16384];
  int n;
  while ((n = gzread(gz, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  const bool ok = n == 0;
  gzclose(gz);
  if (!ok) return std::nullopt;
  return out;
}
}  // namespace

std::optional<KernelConfig> read_kernel_config(const Fs& fs, const std::string& release) {
  for (const std::string& rel : {"boot/config-" + release, "lib/modules/" + release + "/config"}) {
    auto r = fs.try_read(rel);
    if (r.ok()) return parse_kernel_config(r.text, "/" + rel);
  }
  if (fs.exists("proc/config.gz")) {
    if (auto text = gunzip_file(fs.path("proc/config.gz").string()))
      return parse_kernel_config(*text, "/proc/config.gz");
  }
  return std::nullopt;
}

}  // namespace harness::kernel
