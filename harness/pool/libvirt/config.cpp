// The libvirt provider block: URI parsing, strict validation, guest placement (config.hpp).
#include "harness/pool/libvirt/config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

namespace harness::pool::libvirt {

namespace {

std::string percent_decode(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

bool LibvirtUri::same_machine() const {
  return host.empty() || host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

LibvirtUri parse_uri(const std::string& text) {
  LibvirtUri u;
  u.text = text;
  const auto sep = text.find("://");
  if (sep == std::string::npos || sep == 0) throw std::invalid_argument("'" + text + "' is not a libvirt URI (driver[+transport]://[user@]host[:port]/path)");
  const std::string scheme = text.substr(0, sep);
  const auto plus = scheme.find('+');
  u.driver = scheme.substr(0, plus);
  if (plus != std::string::npos) u.transport = scheme.substr(plus + 1);
  std::string rest = text.substr(sep + 3);
  std::string query;
  if (const auto q = rest.find('?'); q != std::string::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  const auto slash = rest.find('/');
  std::string authority = slash == std::string::npos ? rest : rest.substr(0, slash);
  u.path = slash == std::string::npos ? "" : rest.substr(slash);
  if (const auto at = authority.rfind('@'); at != std::string::npos) {
    u.user = percent_decode(authority.substr(0, at));
    authority = authority.substr(at + 1);
  }
  std::string port;
  if (!authority.empty() && authority[0] == '[') {  // [v6]:port
    const auto close = authority.find(']');
    if (close == std::string::npos) throw std::invalid_argument("'" + text + "': unclosed '[' in the host");
    u.host = authority.substr(0, close + 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') throw std::invalid_argument("'" + text + "': junk after the host");
      port = authority.substr(close + 2);
    }
  } else if (const auto colon = authority.find(':'); colon != std::string::npos) {
    u.host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  } else {
    u.host = authority;
  }
  if (!port.empty()) {
    if (port.size() > 5 || !std::all_of(port.begin(), port.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      throw std::invalid_argument("'" + text + "': port '" + port + "' is not a number");
    u.port = std::stoi(port);
    if (u.port < 1 || u.port > 65535) throw std::invalid_argument("'" + text + "': port " + port + " is out of range");
  }
  std::stringstream qs(query);
  std::string kv;
  while (std::getline(qs, kv, '&')) {
    const auto eq = kv.find('=');
    const std::string k = kv.substr(0, eq), v = eq == std::string::npos ? "" : percent_decode(kv.substr(eq + 1));
    if (k == "keyfile") u.keyfile = v;
    else if (k == "known_hosts") u.known_hosts = v;
    else if (k == "no_verify") u.no_verify = v == "1";
    else if (k == "command") u.command = v;
  }
  return u;
}

std::vector<std::string> LibvirtConfig::guest_names() const {
  std::vector<std::string> names;
  for (const auto& h : hosts)
    for (int i = 0; i < h.guests; ++i) names.push_back("vm" + std::to_string(names.size()));
  return names;
}

std::size_t LibvirtConfig::host_of(std::size_t guest_index) const {
  std::size_t first = 0;
  for (std::size_t h = 0; h < hosts.size(); ++h) {
    const auto n = static_cast<std::size_t>(std::max(hosts[h].guests, 0));
    if (guest_index < first + n) return h;
    first += n;
  }
  throw std::out_of_range("guest index " + std::to_string(guest_index) + " is beyond the provider's " +
                          std::to_string(first) + " guests");
}

namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

/// One mapping of the block, its keys read one by one; finish() refuses the rest. Kept
/// here (not shared) so that the engine stays self-contained until the registry's
/// strict-YAML reader takes over.
class Map {
 public:
  Map(const YAML::Node& n, std::string path, const std::string& file) : n_(n), path_(std::move(path)), file_(file) {
    if (!n_.IsMap()) fail(n_, path_, "expected a mapping");
    std::map<std::string, YAML::Mark> seen;
    for (const auto& kv : n_) {
      const std::string k = kv.first.Scalar();
      auto [it, fresh] = seen.emplace(k, kv.first.Mark());
      if (!fresh)
        fail(kv.first, field(k),
             "duplicate key (first given at " + file_ + ":" + std::to_string(it->second.line + 1) + ":" +
                 std::to_string(it->second.column + 1) + ")");
    }
  }

  [[noreturn]] void fail(const YAML::Node& at, const std::string& f, const std::string& msg) const {
    const YAML::Mark m = at.Mark();
    throw ConfigError(file_ + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1) + ": field " + f +
                      ": " + msg);
  }

  std::string field(const std::string& k) const { return path_ + "." + k; }

  YAML::Node get(const std::string& k, bool required) {
    used_.insert(k);
    YAML::Node v = n_[k];
    if (!v && required) {
      for (const auto& kv : n_) {
        const std::string other = kv.first.Scalar();
        if (!used_.count(other) && edit_distance(other, k) <= 2)
          fail(kv.first, field(other), "unknown key (did you mean '" + k + "'? it is required and missing)");
      }
      fail(n_, field(k), "missing (required)");
    }
    return v;
  }

  std::string text(const std::string& k, const std::string& def, bool required = false) {
    YAML::Node v = get(k, required);
    if (!v) return def;
    if (!v.IsScalar()) fail(v, field(k), "expected a scalar value");
    return v.Scalar();
  }

  bool boolean(const std::string& k, bool def) {
    YAML::Node v = get(k, false);
    if (!v) return def;
    if (!v.IsScalar()) fail(v, field(k), "expected true or false");
    const std::string& s = v.Scalar();
    if (s == "true") return true;
    if (s == "false") return false;
    fail(v, field(k), "'" + s + "' is not true or false");
  }

  int positive(const std::string& k, std::optional<int> def, int max) {
    YAML::Node v = get(k, !def);
    if (!v) return *def;
    if (!v.IsScalar()) fail(v, field(k), "expected an integer");
    const std::string& s = v.Scalar();
    if (!std::regex_match(s, std::regex("[0-9]{1,9}"))) fail(v, field(k), "'" + s + "' is not an integer");
    if (s.size() > 1 && s[0] == '0')
      fail(v, field(k), "'" + s + "' has a leading zero (YAML 1.1 would read it as octal); write it without");
    const int x = std::stoi(s);
    if (x <= 0) fail(v, field(k), "must be > 0 (got " + s + ")");
    if (x > max) fail(v, field(k), "must be <= " + std::to_string(max) + " (got " + s + ")");
    return x;
  }

  void finish() const {
    for (const auto& kv : n_) {
      const std::string k = kv.first.Scalar();
      if (used_.count(k)) continue;
      std::string best;
      std::size_t best_d = 3;
      for (const auto& u : used_)
        if (const auto d = edit_distance(k, u); d < best_d) best_d = d, best = u;
      fail(kv.first, field(k), best.empty() ? "unknown key" : "unknown key (did you mean '" + best + "'?)");
    }
  }

  const YAML::Node& node() const { return n_; }

 private:
  YAML::Node n_;
  std::string path_;
  const std::string& file_;
  std::set<std::string> used_;
};

void check_uri(Map& m, const YAML::Node& at, const std::string& f, const LibvirtUri& u) {
  if (u.driver != "qemu")
    m.fail(at, f, "'" + u.text + "': the libvirt engine drives qemu domains (qemu:///system, qemu+ssh://USER@HOST/system)");
  static const std::set<std::string> transports = {"", "ssh", "libssh", "libssh2", "tcp", "tls", "unix"};
  if (!transports.count(u.transport)) m.fail(at, f, "'" + u.text + "': unknown transport '" + u.transport + "'");
  if (u.path != "/system")
    m.fail(at, f, "'" + u.text + "': must name the system instance (path /system; a session instance runs guests as "
                  "the connecting user and has no storage pool the harness can rely on)");
  if (!u.same_machine() && !u.tunnel())
    m.fail(at, f, "'" + u.text + "': a remote hypervisor must be reached over ssh (qemu+ssh://USER@" + u.host +
                  "/system): the runner reaches each guest's agent through an ssh tunnel to the hypervisor's "
                  "loopback address (README.md in harness/pool/libvirt)");
  if (u.tunnel() && u.host.empty()) m.fail(at, f, "'" + u.text + "': an ssh URI needs a host");
}

}  // namespace

LibvirtConfig parse_libvirt_provider(const YAML::Node& provider, const std::string& file) {
  Map m(provider, "provider", file);
  LibvirtConfig c;
  const std::string kind = m.text("kind", "", true);
  if (kind != "libvirt") m.fail(m.node()["kind"], m.field("kind"), "'" + kind + "' is not libvirt");

  YAML::Node hosts = m.get("hosts", true);
  if (!hosts.IsSequence() || hosts.size() == 0)
    m.fail(hosts, m.field("hosts"), "expected a non-empty list of {uri: ..., guests: N}");
  std::map<std::string, std::string> seen;  // URI -> field where first given
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    Map h(hosts[i], m.field("hosts") + "[" + std::to_string(i) + "]", file);
    LibvirtHost host;
    const std::string text = h.text("uri", "", true);
    const YAML::Node at = h.node()["uri"];
    try {
      host.uri = parse_uri(text);
    } catch (const std::invalid_argument& e) {
      h.fail(at, h.field("uri"), e.what());
    }
    check_uri(h, at, h.field("uri"), host.uri);
    if (auto [it, fresh] = seen.emplace(text, h.field("uri")); !fresh)
      h.fail(at, h.field("uri"), "'" + text + "' is already " + it->second + " (give one entry per host with its guest count)");
    host.guests = h.positive("guests", std::nullopt, 256);
    h.finish();
    c.hosts.push_back(host);
  }
  c.fresh_guest_per_case = m.boolean("fresh_guest_per_case", c.fresh_guest_per_case);
  c.accelerator = m.text("accelerator", c.accelerator);
  if (c.accelerator != "auto" && c.accelerator != "kvm" && c.accelerator != "tcg")
    m.fail(m.node()["accelerator"], m.field("accelerator"), "'" + c.accelerator + "' is not one of auto, kvm, tcg");
  c.overcommit = m.boolean("overcommit", c.overcommit);
  c.name_prefix = m.text("name_prefix", c.name_prefix);
  if (!std::regex_match(c.name_prefix, std::regex("[A-Za-z0-9_.-]{0,32}")))
    m.fail(m.node()["name_prefix"], m.field("name_prefix"), "'" + c.name_prefix + "' does not match [A-Za-z0-9_.-]{0,32}");
  c.storage_pool = m.text("storage_pool", c.storage_pool);
  if (!std::regex_match(c.storage_pool, std::regex("[A-Za-z0-9_.-]{1,64}")))
    m.fail(m.node()["storage_pool"], m.field("storage_pool"), "'" + c.storage_pool + "' does not match [A-Za-z0-9_.-]{1,64}");
  c.storage_path = m.text("storage_path", c.storage_path);
  if (c.storage_path.empty() || c.storage_path[0] != '/' || c.storage_path.find("/.") != std::string::npos ||
      c.storage_path.rfind("/home/", 0) == 0 || c.storage_path.rfind("/root", 0) == 0)
    m.fail(m.node()["storage_path"], m.field("storage_path"),
           "'" + c.storage_path + "' must be an absolute path outside home and hidden directories (the libvirt-qemu "
           "user must read it; AppArmor denies hidden home directories)");
  c.boot_timeout_s = m.positive("boot_timeout_s", c.boot_timeout_s, 3600);
  m.finish();
  return c;
}

}  // namespace harness::pool::libvirt
