// A host's identity (see host_identity.hpp).
#include "harness/pool/host_identity.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <vector>

namespace harness::pool {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

/// The query parameters that choose the daemon (host_identity.hpp).
bool identifies_daemon(const std::string& key) { return key == "socket" || key == "name"; }

}  // namespace

std::string host_identity(const std::string& uri) {
  const std::string text = trim(uri);
  const auto sep = text.find("://");
  if (sep == std::string::npos) return text;
  const std::string scheme = lower(text.substr(0, sep));
  std::string rest = text.substr(sep + 3);
  if (const auto hash = rest.find('#'); hash != std::string::npos) rest = rest.substr(0, hash);
  std::string query;
  if (const auto q = rest.find('?'); q != std::string::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  const auto slash = rest.find('/');
  std::string authority = slash == std::string::npos ? rest : rest.substr(0, slash);
  const std::string path = slash == std::string::npos ? "" : rest.substr(slash);
  std::string user;
  if (const auto at = authority.rfind('@'); at != std::string::npos) {
    user = authority.substr(0, at);
    if (const auto colon = user.find(':'); colon != std::string::npos) user = user.substr(0, colon);  // a password
    authority = authority.substr(at + 1);
  }
  std::vector<std::string> kept;
  std::stringstream qs(query);
  std::string kv;
  while (std::getline(qs, kv, '&'))
    if (!kv.empty() && identifies_daemon(kv.substr(0, kv.find('=')))) kept.push_back(kv);
  std::sort(kept.begin(), kept.end());
  std::string out = scheme + "://" + (user.empty() ? "" : user + "@") + lower(authority) + path;
  for (std::size_t i = 0; i < kept.size(); ++i) out += (i ? "&" : "?") + kept[i];
  return out;
}

}  // namespace harness::pool
