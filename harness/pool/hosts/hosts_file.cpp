// Hosts file reader (harness/vm/HOSTS.md; see hosts_file.hpp).
#include "harness/pool/hosts/hosts_file.hpp"

#include "harness/agent/client/client.hpp"
#include "harness/text/join.hpp"
#include "harness/yaml/strict_yaml.hpp"

#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

namespace harness::pool::hosts {

namespace {

/// A pin the agent client can hand to libcurl (CURLOPT_PINNEDPUBLICKEY): after the client's
/// own normalisation (harness/agent/client/client.cpp: "sha256//" is put in front when the value
/// lacks it), each of its ';'-joined pins is "sha256//" and the base64 of 32 bytes (43
/// base64 characters and one '=').
bool is_sha256_pin_list(std::string v) {
  if (v.rfind("sha256//", 0) != 0) v = "sha256//" + v;
  std::istringstream in(v);
  int n = 0;
  for (std::string pin; std::getline(in, pin, ';'); ++n) {
    if (pin.size() != 8 + 44 || pin.rfind("sha256//", 0) != 0 || pin.back() != '=') return false;
    for (std::size_t i = 8; i + 1 < pin.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(pin[i]);
      if (!std::isalnum(c) && c != '+' && c != '/') return false;
    }
  }
  return n > 0 && v.back() != ';';
}

}  // namespace

std::vector<HostEntry> load_hosts(const std::string& path) {
  const YAML::Node root = yaml::parse_file(path);
  if (!root.IsMap() || !root["hosts"] || !root["hosts"].IsSequence())
    throw yaml::InputError(path + ":1:1: field hosts: expected a mapping with a list `hosts:`");
  yaml::Section top(root, "", path);
  const YAML::Node list = top.get("hosts", true);
  top.finish();
  std::vector<HostEntry> out;
  std::set<std::string> names;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node n = list[i];
    yaml::Section s(n, "hosts[" + std::to_string(i) + "]", path);
    HostEntry h;
    h.name = s.scalar<std::string>("name");
    h.url = s.scalar<std::string>("url");
    h.token_file = s.scalar<std::string>("token_file");
    h.accelerator = s.scalar<std::string>("accelerator", std::string());
    h.local = s.scalar<bool>("local", false);
    h.local_guest = s.scalar<std::string>("local_guest", std::string());
    h.tls_ca_file = s.scalar<std::string>("tls_ca_file", std::string());
    h.tls_pin_sha256 = s.scalar<std::string>("tls_pin_sha256", std::string());
    h.insecure_plain_http = s.scalar<bool>("insecure_plain_http", false);
    h.reboot_between_cases = s.scalar<bool>("reboot_between_cases", false);
    h.reboot_timeout_s = s.scalar<int>("reboot_timeout_s", 600);
    h.hypervisor = s.scalar<std::string>("hypervisor", std::string());
    s.finish();
    if (h.reboot_timeout_s < 10 || h.reboot_timeout_s > 86400)
      s.fail(s.at("reboot_timeout_s"), s.field("reboot_timeout_s"), "must be between 10 and 86400 seconds");
    if (h.name.empty()) s.fail(s.at("name"), s.field("name"), "must not be empty");
    if (h.url.rfind("http://", 0) != 0 && h.url.rfind("https://", 0) != 0)
      s.fail(s.at("url"), s.field("url"), "must start with http:// or https://");
    if (h.token_file.empty()) s.fail(s.at("token_file"), s.field("token_file"), "must not be empty");
    const bool https = h.url.rfind("https://", 0) == 0;
    if (!https && (!h.tls_ca_file.empty() || !h.tls_pin_sha256.empty()))
      s.fail(s.at("url"), s.field("url"), "tls_ca_file / tls_pin_sha256 need an https:// URL");
    if (!h.tls_pin_sha256.empty() && !is_sha256_pin_list(h.tls_pin_sha256))
      s.fail(s.at("tls_pin_sha256"), s.field("tls_pin_sha256"),
             "must be the 44-character base64 SHA-256 of the agent certificate's public key, with or without "
             "'sha256//' (`harness fleet pin CERT` prints it; several pins are joined with ';', each after the "
             "first with its 'sha256//'), got '" + h.tls_pin_sha256 + "'");
    if (!https && !h.insecure_plain_http && !agent::url_is_loopback(h.url))
      s.fail(s.at("url"), s.field("url"),
             "plain http:// to a non-loopback agent sends the bearer token in clear text: use https:// with "
             "tls_pin_sha256 or tls_ca_file (agent --tls-cert/--tls-key), or set insecure_plain_http: true");
    if (!h.local_guest.empty() && !h.local)
      s.fail(s.at("local_guest"), s.field("local_guest"), "names a local guest: only with `local: true`");
    if (!h.local_guest.empty()) yaml::check_name(s, s.at("local_guest"), s.field("local_guest"), h.local_guest, "[A-Za-z0-9_-]{1,32}");
    if (h.local && h.reboot_between_cases)
      s.fail(s.at("reboot_between_cases"), s.field("reboot_between_cases"),
             "a local guest is rebooted by `harness vm reboot` (campaign provider.fresh_guest_per_case), not through "
             "its agent");
    if (!names.insert(h.name).second) s.fail(s.at("name"), s.field("name"), "duplicate host '" + h.name + "'");
    out.push_back(h);
  }
  return out;
}

Guest guest_of(const HostEntry& e) {
  Guest g;
  g.name = e.name;
  g.url = e.url;
  g.token_file = e.token_file;
  g.accelerator = e.accelerator;
  g.tls_ca_file = e.tls_ca_file;
  g.tls_pin_sha256 = e.tls_pin_sha256;
  g.insecure_plain_http = e.insecure_plain_http;
  g.reboot_between_cases = e.reboot_between_cases;
  g.reboot_timeout_s = e.reboot_timeout_s;
  return g;
}

GuestsPreview preview_hosts(const std::string& path, const std::vector<std::string>& vms,
                           const std::string& campaign_file) {
  GuestsPreview p;
  if (path.empty() || !std::filesystem::exists(path)) return p;
  std::map<std::string, HostEntry> by;
  for (auto& h : load_hosts(path)) by[h.name] = h;
  std::vector<std::string> missing, listed;
  for (const auto& vm : vms) {
    const auto it = by.find(vm);
    if (it == by.end()) {
      missing.push_back(vm);
      continue;
    }
    p.reboot_between_cases = p.reboot_between_cases || it->second.reboot_between_cases;
    if (!it->second.local) p.not_booted.push_back(vm);
  }
  if (!missing.empty()) {
    for (const auto& [n, h] : by) listed.push_back(n);
    throw PoolError(path + ": no host named " + harness::text::join(missing) + " (" + campaign_file + " uses " +
                    std::to_string(vms.size()) + " VM(s); the file lists " +
                    (listed.empty() ? std::string("none") : harness::text::join(listed)) + ")");
  }
  return p;
}

}  // namespace harness::pool::hosts
