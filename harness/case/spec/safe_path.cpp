// The path rules of a spec and a campaign (see safe_path.hpp).
#include "harness/case/spec/safe_path.hpp"

#include "harness/text/join.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <string_view>

namespace harness::case_ {

Checked check_path_inside(const std::string& path, const std::vector<std::string>& allowed) {
  namespace fs = std::filesystem;
  const fs::path p = fs::path(path).lexically_normal();
  const std::string list = text::join(allowed);
  auto inside = [](const fs::path& child, const fs::path& dir) {
    const std::string c = child.string(), d = dir.string();
    if (d.empty()) return false;
    const std::string prefix = d.back() == '/' ? d : d + "/";
    return c.size() > prefix.size() && c.compare(0, prefix.size(), prefix) == 0;
  };
  // A symlink whose target does not exist, anywhere along the path, is refused: resolving it
  // would stop there and leave the rest unresolved, so where a file written through it lands
  // cannot be judged.
  for (fs::path prefix; const auto& part : p) {
    prefix /= part;
    std::error_code el, et;
    if (fs::is_symlink(fs::symlink_status(prefix, el)) && !fs::exists(fs::status(prefix, et)))
      return problem(fmt::format("passes through {}, a symlink whose target does not exist (dangling): refused",
                                 prefix.string()));
  }
  // What exists of the path is resolved (symlinks followed) and a new leaf appended to it, so a
  // new file under a symlinked directory is judged where it would be created.
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(p, ec);
  for (const auto& a : allowed) {
    const fs::path dir = fs::path(a).lexically_normal();
    if (!inside(p, dir)) continue;
    std::error_code ec2;
    const fs::path real_dir = fs::weakly_canonical(dir, ec2);
    if (!ec && !ec2 && inside(real, real_dir)) return {};
    return problem(fmt::format("resolves to {} (symlinks followed), outside the allowed directories ({})",
                               real.string(), list));
  }
  return problem(fmt::format("is not under the allowed directories ({}; start the agent with --allow-path DIR to add one)",
                             list.empty() ? std::string("none") : list));
}

Checked check_safe_path(const std::string& path) {
  if (path.empty() || path.front() != '/') return problem("must be an absolute path (start with '/')");
  if (path.size() > 4096) return problem("is longer than 4096 characters");
  for (std::size_t i = 0; i < path.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(path[i]);
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '/' || c == '-';
    if (!ok) {
      const std::string shown = c >= 0x21 && c < 0x7f ? fmt::format("'{}'", static_cast<char>(c))
                                                      : fmt::format("byte 0x{:02x}", c);
      return problem(fmt::format("contains {} at offset {} (allowed: A-Z a-z 0-9 . _ / -)", shown, i));
    }
  }
  std::size_t start = 1;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const std::string_view comp(path.data() + start, end - start);
    if (comp == "." || comp == "..") return problem(fmt::format("must not contain a '{}' component", comp));
    start = end + 1;
  }
  return {};
}

}  // namespace harness::case_
