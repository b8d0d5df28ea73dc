// Hosts file reader (harness/vm/HOSTS.md).
#include "harness/campaign/hosts.hpp"

#include "harness/campaign/campaign.hpp"

#include <yaml-cpp/yaml.h>

#include <set>

namespace harness::campaign {
namespace {
[[noreturn]] void fail(const std::string& file, const YAML::Node& at, const std::string& field, const std::string& m) {
  const auto mk = at.Mark();
  throw CampaignError(file + ":" + std::to_string(mk.line + 1) + ":" + std::to_string(mk.column + 1) + ": field " +
                      field + ": " + m);
}
}  // namespace

std::vector<Host> load_hosts(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw CampaignError(path + ": cannot open hosts file");
  } catch (const YAML::ParserException& e) {
    throw CampaignError(path + ":" + std::to_string(e.mark.line + 1) + ": YAML syntax: " + e.msg);
  }
  if (!root.IsMap() || !root["hosts"] || !root["hosts"].IsSequence())
    throw CampaignError(path + ":1:1: field hosts: expected a mapping with a list `hosts:`");
  for (const auto& kv : root)
    if (kv.first.as<std::string>() != "hosts") fail(path, kv.first, kv.first.as<std::string>(), "unknown key");
  std::vector<Host> out;
  std::set<std::string> names;
  const YAML::Node list = root["hosts"];
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node n = list[i];
    const std::string base = "hosts[" + std::to_string(i) + "]";
    if (!n.IsMap()) fail(path, n, base, "expected a mapping");
    Host h;
    for (const auto& kv : n) {
      const std::string k = kv.first.as<std::string>();
      const std::string f = base + "." + k;
      try {
        if (k == "name") h.name = kv.second.as<std::string>();
        else if (k == "url") h.url = kv.second.as<std::string>();
        else if (k == "token_file") h.token_file = kv.second.as<std::string>();
        else if (k == "accelerator") h.accelerator = kv.second.as<std::string>();
        else if (k == "local") h.local = kv.second.as<bool>();
        else if (k == "tls_ca_file") h.tls_ca_file = kv.second.as<std::string>();
        else if (k == "tls_pin_sha256") h.tls_pin_sha256 = kv.second.as<std::string>();
        else if (k == "insecure_plain_http") h.insecure_plain_http = kv.second.as<bool>();
        else if (k == "reboot_between_cases") h.reboot_between_cases = kv.second.as<bool>();
        else if (k == "reboot_timeout_s") {
          h.reboot_timeout_s = kv.second.as<int>();
          if (h.reboot_timeout_s < 10 || h.reboot_timeout_s > 86400)
            fail(path, kv.second, f, "must be between 10 and 86400 seconds");
        }
        else fail(path, kv.first, f, "unknown key");
      } catch (const YAML::BadConversion&) {
        fail(path, kv.second, f, "wrong type");
      }
    }
    if (h.name.empty()) fail(path, n, base + ".name", "missing (required)");
    if (h.url.rfind("http://", 0) != 0 && h.url.rfind("https://", 0) != 0)
      fail(path, n["url"] ? n["url"] : n, base + ".url", "must start with http:// or https://");
    if (h.token_file.empty()) fail(path, n, base + ".token_file", "missing (required)");
    const bool https = h.url.rfind("https://", 0) == 0;
    if (!https && (!h.tls_ca_file.empty() || !h.tls_pin_sha256.empty()))
      fail(path, n["url"], base + ".url", "tls_ca_file / tls_pin_sha256 need an https:// URL");
    if (!https && !h.insecure_plain_http && !agent::url_is_loopback(h.url))
      fail(path, n["url"], base + ".url",
           "plain http:// to a non-loopback agent sends the bearer token in clear text: use https:// with "
           "tls_pin_sha256 or tls_ca_file (agent --tls-cert/--tls-key), or set insecure_plain_http: true");
    if (h.local && h.reboot_between_cases)
      fail(path, n["reboot_between_cases"], base + ".reboot_between_cases",
           "a local guest is rebooted by `harness vm reboot` (campaign provider.fresh_guest_per_case), not through "
           "its agent");
    if (!names.insert(h.name).second) fail(path, n["name"], base + ".name", "duplicate host '" + h.name + "'");
    out.push_back(h);
  }
  return out;
}

agent::ClientOptions client_options(const Host& h, agent::ClientOptions base) {
  base.tls_ca_file = h.tls_ca_file;
  base.tls_pin_sha256 = h.tls_pin_sha256;
  base.allow_plain_http = h.insecure_plain_http;
  return base;
}

}  // namespace harness::campaign
