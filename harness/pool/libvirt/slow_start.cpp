// Why a domain start is slow (slow_start.hpp).
#include "harness/pool/libvirt/slow_start.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace fs = std::filesystem;

namespace harness::pool::libvirt {

namespace {

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

std::vector<std::vector<std::string>> colon_lines(const fs::path& file) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string x;
    while (std::getline(ss, x, ':')) f.push_back(x);
    if (!line.empty() && line.back() == ':') f.push_back("");
    rows.push_back(f);
  }
  return rows;
}

/// `key = "value"` of qemu.conf ("" when absent or commented out).
std::string conf_value(const fs::path& file, const std::string& key) {
  std::ifstream in(file);
  std::string line, value;
  while (std::getline(in, line)) {
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    const auto eq = t.find('=');
    if (eq == std::string::npos || trim(t.substr(0, eq)) != key) continue;
    std::string v = trim(t.substr(eq + 1));
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
    value = v;
  }
  return value;
}

std::string octal(unsigned mode) {
  char b[8];
  std::snprintf(b, sizeof b, "%04o", mode & 07777);
  return b;
}

std::string fmt_s(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", s);
  return b;
}

}  // namespace

bool start_dominates(double start_s, double boot_to_ready_s) {
  return start_s >= kSlowStartFloorS && boot_to_ready_s > 0 && start_s >= 0.5 * boot_to_ready_s;
}

bool may_read_write(const DeviceNode& node, const RunAs& u) {
  if (u.uid == 0) return true;
  unsigned bits;
  if (u.uid == node.uid) bits = (node.mode >> 6) & 7;
  else if (std::find(u.gids.begin(), u.gids.end(), node.gid) != u.gids.end()) bits = (node.mode >> 3) & 7;
  else bits = node.mode & 7;
  return (bits & 6) == 6;
}

std::optional<RunAs> qemu_run_user(const std::string& host_root) {
  const fs::path root(host_root);
  std::string user = conf_value(root / "etc/libvirt/qemu.conf", "user");
  std::string group = conf_value(root / "etc/libvirt/qemu.conf", "group");
  if (user.empty()) user = "libvirt-qemu";  // Debian's build default
  const auto passwd = colon_lines(root / "etc/passwd");
  const auto groups = colon_lines(root / "etc/group");
  RunAs u;
  bool found = false;
  for (const auto& p : passwd) {
    if (p.size() < 4) continue;
    const bool by_uid = user[0] == '+' && p[2] == user.substr(1);
    if (p[0] != user && !by_uid) continue;
    u.name = p[0];
    u.uid = static_cast<unsigned>(std::stoul(p[2]));
    u.gids.push_back(static_cast<unsigned>(std::stoul(p[3])));
    found = true;
    break;
  }
  if (!found) return std::nullopt;
  if (!group.empty()) {
    u.gids.clear();
    for (const auto& g : groups)
      if (g.size() >= 3 && (g[0] == group || (group[0] == '+' && g[2] == group.substr(1))))
        u.gids.push_back(static_cast<unsigned>(std::stoul(g[2])));
  }
  for (const auto& g : groups) {
    if (g.size() < 4) continue;
    std::stringstream members(g[3]);
    std::string m;
    while (std::getline(members, m, ','))
      if (trim(m) == u.name) u.gids.push_back(static_cast<unsigned>(std::stoul(g[2])));
  }
  std::sort(u.gids.begin(), u.gids.end());
  u.gids.erase(std::unique(u.gids.begin(), u.gids.end()), u.gids.end());
  return u;
}

Checked check_kvm_permission(const std::string& host_root) {
  const fs::path root(host_root);
  struct stat st{};
  if (::stat((root / "dev/kvm").c_str(), &st) != 0) return {};
  const auto u = qemu_run_user(host_root);
  if (!u) return {};
  const DeviceNode node{static_cast<unsigned>(st.st_uid), static_cast<unsigned>(st.st_gid),
                        static_cast<unsigned>(st.st_mode & 07777)};
  if (may_read_write(node, *u)) return {};
  std::map<unsigned, std::string> group_names;
  for (const auto& g : colon_lines(root / "etc/group"))
    if (g.size() >= 3) group_names[static_cast<unsigned>(std::stoul(g[2]))] = g[0];
  std::map<unsigned, std::string> user_names;
  for (const auto& p : colon_lines(root / "etc/passwd"))
    if (p.size() >= 3) user_names[static_cast<unsigned>(std::stoul(p[2]))] = p[0];
  auto name_of = [](const std::map<unsigned, std::string>& m, unsigned id) {
    const auto it = m.find(id);
    return it == m.end() ? std::to_string(id) : it->second;
  };
  std::string gl;
  for (unsigned g : u->gids) gl += (gl.empty() ? "" : ", ") + name_of(group_names, g);
  return problem("/dev/kvm is " + name_of(user_names, node.uid) + ":" + name_of(group_names, node.gid) + " " +
                 octal(node.mode) + " and libvirt's qemu user " + u->name + " (groups " + gl +
                 ") cannot open it, so libvirt drops its cached qemu capabilities and probes qemu again at every "
                 "domain start (a machine without udev leaves /dev/kvm so; udev makes it root:kvm 0660: `chgrp kvm "
                 "/dev/kvm; chmod 0660 /dev/kvm` on the hypervisor)");
}

std::optional<std::string> probe_log_summary(const std::string& log_text) {
  // libvirt 9.0 src/qemu/qemu_capabilities.c, debug level (captured lines:
  // tests/unit/pool_libvirt/fixtures/libvirtd-kvm-0600.log).
  static const std::vector<std::pair<std::string, std::string>> reasons = {
      {"but it is not available now", "KVM was enabled when probing but is not available now"},
      {"but it should be usable now", "KVM was not enabled when probing but is usable now"},
      {"/dev/kvm has changed", "/dev/kvm changed"},
      {"Outdated capabilities for", "qemu or libvirt changed"},
  };
  std::map<std::string, int> count;
  int probes = 0;
  std::stringstream in(log_text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("Try to probe capabilities of") != std::string::npos) ++probes;
    for (const auto& [needle, why] : reasons)
      if (line.find(needle) != std::string::npos) ++count[why];
  }
  if (probes == 0) return std::nullopt;
  std::string s = "libvirtd's log shows " + std::to_string(probes) + " qemu capability probe" + (probes == 1 ? "" : "s");
  std::string why;
  for (const auto& [needle, w] : reasons)
    if (count.count(w)) why += (why.empty() ? "" : ", ") + w + " (x" + std::to_string(count[w]) + ")";
  if (!why.empty()) s += "; cache dropped because " + why;
  return s;
}

std::string slow_start_note(const std::string& domain, const std::string& uri, double start_s, double boot_to_ready_s,
                            const std::vector<std::string>& findings) {
  std::string s = domain + " on " + uri + ": the domain start took " + fmt_s(start_s) + " s of the " +
                  fmt_s(boot_to_ready_s) + " s boot-to-ready; ";
  if (findings.empty())
    return s + "libvirt probes qemu again before a start when its cached capabilities look stale: check that "
               "libvirt's qemu user (Debian: libvirt-qemu, in group kvm) may read and write /dev/kvm on that host "
               "(without udev: `chgrp kvm /dev/kvm; chmod 0660 /dev/kvm`) and, with log_filters=\"1:qemu.qemu_capabilities\" "
               "in libvirtd.conf, why libvirtd's log says it probed";
  for (std::size_t i = 0; i < findings.size(); ++i) s += (i ? "; " : "") + findings[i];
  return s;
}

std::uint64_t log_size(const std::string& log_file) {
  struct stat st{};
  return ::stat(log_file.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

std::vector<std::string> local_slow_start_findings(const std::string& host_root, const std::string& log_file,
                                                   std::uint64_t log_from) {
  std::vector<std::string> findings;
  if (auto c = check_kvm_permission(host_root); !c) findings.push_back(c.error().message);
  std::ifstream in(log_file, std::ios::binary);
  if (in) {
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    std::streamoff from = static_cast<std::streamoff>(log_from) <= size ? static_cast<std::streamoff>(log_from) : 0;
    if (size - from > (1 << 20)) from = size - (1 << 20);
    in.seekg(from);
    std::string text(static_cast<std::size_t>(size - from), '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    if (auto c = probe_log_summary(text)) findings.push_back(*c);
  }
  return findings;
}

}  // namespace harness::pool::libvirt
