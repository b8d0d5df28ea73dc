// A host's identity (see host_identity.hpp).
#include "harness/pool/host_identity.hpp"

#include "harness/pool/uri_parts.hpp"

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
  const auto parts = split_uri(text);
  if (!parts) return text;
  const std::string scheme = lower(parts->scheme);
  const std::string user = parts->userinfo.substr(0, parts->userinfo.find(':'));  // a password dropped
  const std::string& authority = parts->authority;
  const std::string& path = parts->path;
  const std::string& query = parts->query;
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
