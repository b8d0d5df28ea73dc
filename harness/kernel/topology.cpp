// cgroup topology: mounts, /proc/cgroups, controller placement (topology.hpp).
#include "harness/kernel/topology.hpp"

#include <algorithm>

#include "harness/kernel/errors.hpp"
#include "harness/kernel/keyed.hpp"
#include "harness/kernel/text.hpp"

namespace harness::kernel {

std::vector<Mount> parse_mounts(std::string_view text, const std::string& file) {
  std::vector<Mount> out;
  int lineno = 0;
  for (auto line : split_lines(text)) {
    ++lineno;
    auto w = split_ws(line);
    if (w.empty()) continue;
    if (w.size() < 4)
      throw ParseError(file, lineno, "mount", "expected 'source mountpoint fstype options ...', got " +
                                                  std::to_string(w.size()) + " fields");
    Mount m;
    m.source = unescape_octal(w[0]);
    m.mountpoint = unescape_octal(w[1]);
    m.fstype = std::string(w[2]);
    std::string_view opts = w[3];
    size_t pos = 0;
    while (pos <= opts.size()) {
      size_t c = opts.find(',', pos);
      if (c == std::string_view::npos) c = opts.size();
      if (c > pos) m.options.emplace_back(opts.substr(pos, c - pos));
      pos = c + 1;
    }
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<ControllerBinding> parse_proc_cgroups(std::string_view text, const std::string& file) {
  std::vector<ControllerBinding> out;
  int lineno = 0;
  for (auto line : split_lines(text)) {
    ++lineno;
    auto t = trim(line);
    if (t.empty() || t.front() == '#') continue;
    auto w = split_ws(t);
    if (w.size() != 4)
      throw ParseError(file, lineno, w.empty() ? "line" : std::string(w[0]),
                       "expected 'subsys_name hierarchy num_cgroups enabled', got " + std::to_string(w.size()) +
                           " fields");
    ControllerBinding b;
    b.name = std::string(w[0]);
    b.hierarchy = static_cast<int>(parse_u64(w[1], file, lineno, b.name + ".hierarchy"));
    b.num_cgroups = static_cast<unsigned>(parse_u64(w[2], file, lineno, b.name + ".num_cgroups"));
    b.enabled = parse_u64(w[3], file, lineno, b.name + ".enabled") != 0;
    out.push_back(std::move(b));
  }
  return out;
}

std::optional<std::string> find_cgroup2_mount(const Fs& fs) {
  auto r = fs.try_read("proc/self/mounts");
  if (!r.ok()) {
    if (fs.exists("sys/fs/cgroup/cgroup.controllers")) return std::string("/sys/fs/cgroup");
    return std::nullopt;
  }
  for (const auto& m : parse_mounts(r.text, fs.path("proc/self/mounts").string()))
    if (m.fstype == "cgroup2") return m.mountpoint;
  return std::nullopt;
}

ControllerPlacement locate_controller(const Fs& fs, const std::string& name) {
  ControllerPlacement p;
  p.name = name;
  std::vector<Mount> mounts;
  if (auto r = fs.try_read("proc/self/mounts"); r.ok()) mounts = parse_mounts(r.text, fs.path("proc/self/mounts").string());
  p.cgroup2_mount = find_cgroup2_mount(fs);
  if (auto r = fs.try_read("proc/cgroups"); r.ok()) {
    for (const auto& b : parse_proc_cgroups(r.text, fs.path("proc/cgroups").string())) {
      if (b.name != name) continue;
      p.compiled_in = true;
      p.enabled = b.enabled;
      p.v1_hierarchy = b.hierarchy;
    }
  }
  for (const auto& m : mounts) {
    if (m.fstype == "cgroup" && !p.v1_mountpoint &&
        std::find(m.options.begin(), m.options.end(), name) != m.options.end())
      p.v1_mountpoint = m.mountpoint;
  }
  if (p.cgroup2_mount) {
    auto has = [&](const std::string& f) {
      auto r = fs.try_read(*p.cgroup2_mount + "/" + f);
      if (!r.ok()) return false;
      for (auto w : split_ws(r.text))
        if (w == name) return true;
      return false;
    };
    p.in_cgroup2_root = has("cgroup.controllers");
    p.enabled_for_children = has("cgroup.subtree_control");
  }
  return p;
}

}  // namespace harness::kernel
