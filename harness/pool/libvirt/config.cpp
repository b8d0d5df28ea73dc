// The libvirt provider block: URI parsing, strict validation, guest placement (config.hpp).
#include "harness/pool/libvirt/config.hpp"

#include "harness/pool/host_identity.hpp"
#include "harness/pool/uri_parts.hpp"

#include <algorithm>
#include <cctype>
#include <map>
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
  const auto parts = split_uri(text);
  if (!parts) throw std::invalid_argument("'" + text + "' is not a libvirt URI (driver[+transport]://[user@]host[:port]/path)");
  const std::string& scheme = parts->scheme;
  const auto plus = scheme.find('+');
  u.driver = scheme.substr(0, plus);
  if (plus != std::string::npos) u.transport = scheme.substr(plus + 1);
  const std::string& authority = parts->authority;
  const std::string& query = parts->query;
  u.path = parts->path;
  if (!parts->userinfo.empty()) u.user = percent_decode(parts->userinfo);
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

void check_uri(const yaml::Section& s, const YAML::Node& at, const std::string& f, const LibvirtUri& u) {
  if (u.driver != "qemu")
    s.fail(at, f, "'" + u.text + "': the libvirt engine drives qemu domains (qemu:///system, qemu+ssh://USER@HOST/system)");
  static const std::set<std::string> transports = {"", "ssh", "libssh", "libssh2", "tcp", "tls", "unix"};
  if (!transports.count(u.transport)) s.fail(at, f, "'" + u.text + "': unknown transport '" + u.transport + "'");
  if (u.path != "/system")
    s.fail(at, f, "'" + u.text + "': must name the system instance (path /system; a session instance runs guests as "
                  "the connecting user and has no storage pool the harness can rely on)");
  if (!u.same_machine() && !u.tunnel())
    s.fail(at, f, "'" + u.text + "': a remote hypervisor must be reached over ssh (qemu+ssh://USER@" + u.host +
                  "/system): the runner reaches each guest's agent through an ssh tunnel to the hypervisor's "
                  "loopback address (README.md in harness/pool/libvirt)");
  if (u.tunnel() && u.host.empty()) s.fail(at, f, "'" + u.text + "': an ssh URI needs a host");
  if (u.transport == "ssh" && !u.known_hosts.empty())
    s.fail(at, f, "'" + u.text + "': known_hosts= is not read by libvirt's ssh transport (qemu+ssh runs ssh without "
                  "it, so the host key would be checked against ~/.ssh/known_hosts anyway): put the hypervisor's key in "
                  "~/.ssh/known_hosts of the user running the harness, or give command= an ssh wrapper that passes "
                  "-o UserKnownHostsFile=FILE (README.md in harness/pool/libvirt, \"Host keys\"); known_hosts= works "
                  "with qemu+libssh:// and qemu+libssh2://");
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

LibvirtConfig parse_libvirt_block(yaml::Section& s) {
  LibvirtConfig c;
  YAML::Node hosts = s.get("hosts", true);
  if (!hosts.IsSequence() || hosts.size() == 0)
    s.fail(hosts, s.field("hosts"), "expected a non-empty list of {uri: ..., guests: N}");
  std::map<std::string, std::pair<std::string, std::string>> seen;  // host identity -> (field, URI) where first given
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    yaml::Section h(hosts[i], s.field("hosts") + "[" + std::to_string(i) + "]", s.file());
    LibvirtHost host;
    const std::string text = h.scalar<std::string>("uri");
    const YAML::Node at = h.at("uri");
    try {
      host.uri = parse_uri(text);
    } catch (const std::invalid_argument& e) {
      h.fail(at, h.field("uri"), e.what());
    }
    check_uri(h, at, h.field("uri"), host.uri);
    // One host, one entry: URIs with the same identity (they differ at most in credentials and
    // options such as keyfile=) are one host (harness/pool/README.md "Host identity").
    if (auto [it, fresh] = seen.emplace(host_identity(text), std::pair{h.field("uri"), text}); !fresh)
      h.fail(at, h.field("uri"),
             "'" + text + "' is already " + it->second.first +
                 (it->second.second == text ? std::string()
                                            : " ('" + it->second.second + "': the same host, " + it->first +
                                                  ", with other credentials or options)") +
                 " (give one entry per host with its guest count)");
    const auto n = yaml::positive_int(h, "guests");
    if (n > 256) h.fail(h.at("guests"), h.field("guests"), "must be <= 256 (got " + std::to_string(n) + ")");
    host.guests = static_cast<int>(n);
    h.finish();
    c.hosts.push_back(host);
  }
  c.fresh_guest_per_case = s.scalar<bool>("fresh_guest_per_case", c.fresh_guest_per_case);
  c.accelerator = s.scalar<std::string>("accelerator", c.accelerator);
  if (c.accelerator != "auto" && c.accelerator != "kvm" && c.accelerator != "tcg")
    s.fail(s.at("accelerator"), s.field("accelerator"), "'" + c.accelerator + "' is not one of auto, kvm, tcg");
  c.name_prefix = s.scalar<std::string>("name_prefix", c.name_prefix);
  yaml::check_name(s, s.at("name_prefix"), s.field("name_prefix"), c.name_prefix, "[A-Za-z0-9_.-]{0,32}");
  c.storage_pool = s.scalar<std::string>("storage_pool", c.storage_pool);
  yaml::check_name(s, s.at("storage_pool"), s.field("storage_pool"), c.storage_pool, "[A-Za-z0-9_.-]{1,64}");
  c.storage_path = s.scalar<std::string>("storage_path", c.storage_path);
  if (c.storage_path.empty() || c.storage_path[0] != '/' || c.storage_path.find("/.") != std::string::npos ||
      c.storage_path.rfind("/home/", 0) == 0 || c.storage_path.rfind("/root", 0) == 0)
    s.fail(s.at("storage_path"), s.field("storage_path"),
           "'" + c.storage_path + "' must be an absolute path outside home and hidden directories (the libvirt-qemu "
           "user must read it; AppArmor denies hidden home directories)");
  const auto t = yaml::positive_int(s, "boot_timeout_s", c.boot_timeout_s);
  if (t > 3600) s.fail(s.at("boot_timeout_s"), s.field("boot_timeout_s"), "must be <= 3600 (got " + std::to_string(t) + ")");
  c.boot_timeout_s = static_cast<int>(t);
  const auto ct = yaml::positive_int(s, "connect_timeout_s", c.connect_timeout_s);
  if (ct > 3600)
    s.fail(s.at("connect_timeout_s"), s.field("connect_timeout_s"), "must be <= 3600 (got " + std::to_string(ct) + ")");
  c.connect_timeout_s = static_cast<int>(ct);
  return c;
}

nlohmann::json Config::settings() const {
  nlohmann::json hosts = nlohmann::json::array();
  for (const auto& h : libvirt.hosts) hosts.push_back({{"uri", h.uri.text}, {"guests", h.guests}});
  return {{"hosts", hosts},
          {"vms", vms},
          {"fresh_guest_per_case", fresh_guest_per_case},
          {"accelerator", libvirt.accelerator},
          {"name_prefix", libvirt.name_prefix},
          {"storage_pool", libvirt.storage_pool},
          {"storage_path", libvirt.storage_path},
          {"boot_timeout_s", libvirt.boot_timeout_s}};
}

std::string Config::vm_names_source() const {
  std::string s;
  std::size_t first = 0;
  for (const auto& h : libvirt.hosts) {
    const std::size_t last = first + static_cast<std::size_t>(h.guests) - 1;
    s += (s.empty() ? "" : ", ") + ("vm" + std::to_string(first)) +
         (last > first ? "..vm" + std::to_string(last) : std::string()) + " on " + h.uri.text;
    first = last + 1;
  }
  return "libvirt places them across provider.hosts: " + s;
}

Checked Config::check_vm_count(std::size_t n) const {
  if (n == vms.size()) return {};
  return problem("lists " + std::to_string(n) + " VMs but provider.hosts places " + std::to_string(vms.size()) + " (" +
                 join(vms) + "; libvirt boots exactly the design's VMs)");
}

std::shared_ptr<EngineConfig> parse(yaml::Section& s, const ParseContext&) {
  auto c = std::make_shared<Config>();
  c->kind = "libvirt";
  c->libvirt = parse_libvirt_block(s);
  c->fresh_guest_per_case = c->libvirt.fresh_guest_per_case;
  c->vms = c->libvirt.guest_names();
  return c;
}

}  // namespace harness::pool::libvirt
