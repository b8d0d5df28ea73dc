// Deadlines on a hypervisor's answers (deadline.hpp).
#include "harness/pool/libvirt/deadline.hpp"

#include "harness/digest/sha256.hpp"
#include "harness/text/shell_quote.hpp"
#include "harness/vm/paths.hpp"

#include <cctype>
#include <filesystem>
#include <stdexcept>

namespace fs = std::filesystem;

namespace harness::pool::libvirt {

namespace {

std::string percent_encode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

/// `text` with every query parameter named `name` dropped and name=value appended.
std::string with_query_param(const std::string& text, const std::string& name, const std::string& value) {
  const auto q = text.find('?');
  std::string base = text.substr(0, q), query;
  if (q != std::string::npos) {
    const std::string rest = text.substr(q + 1);
    std::size_t from = 0;
    while (from <= rest.size()) {
      const auto amp = rest.find('&', from);
      const std::string p = rest.substr(from, amp == std::string::npos ? std::string::npos : amp - from);
      if (!p.empty() && p.rfind(name + "=", 0) != 0) query += (query.empty() ? "" : "&") + p;
      if (amp == std::string::npos) break;
      from = amp + 1;
    }
  }
  query += (query.empty() ? "" : "&") + name + "=" + value;
  return base + "?" + query;
}

}  // namespace

std::string ssh_wrapper_text(const std::string& program, int timeout_s) {
  return "#!/bin/sh\n"
         "# Written by reclaim-harness (harness/pool/libvirt/deadline.hpp): libvirt's ssh transport with a\n"
         "# deadline on the TCP connect and the SSH handshake (provider.connect_timeout_s).\n"
         "exec " + harness::text::shell_quote(program) + " -o ConnectTimeout=" + std::to_string(timeout_s) + " \"$@\"\n";
}

std::string deadline_uri(const LibvirtUri& uri, int timeout_s, const std::string& wrapper_dir) {
  if (timeout_s < 1) throw std::invalid_argument("deadline_uri: timeout_s must be >= 1");
  if (uri.transport != "ssh" || uri.host.empty()) return uri.text;
  const std::string program = uri.command.empty() ? "ssh" : uri.command;
  const std::string text = ssh_wrapper_text(program, timeout_s);
  const fs::path file = fs::path(wrapper_dir) / ("ssh-deadline-" + harness::digest::sha256_hex(text).substr(0, 16));
  if (!fs::exists(file)) {
    fs::create_directories(wrapper_dir);
    harness::vm::write_file(file.string(), text, 0700);
  }
  return with_query_param(uri.text, "command", percent_encode(file.string()));
}

std::string deadline_uri(const LibvirtConfig& cfg, const LibvirtUri& uri) {
  if (uri.transport != "ssh" || uri.host.empty()) return uri.text;  // no wrapper, no cache needed
  return deadline_uri(uri, cfg.connect_timeout_s, (fs::path(harness::vm::cache_root(cfg.cache_dir)) / "libvirt").string());
}

std::string no_answer_text(const LibvirtUri& uri, int timeout_s) {
  return "no answer in " + std::to_string(timeout_s) + " s (libvirt " + uri.text +
         ": connection, node info and domain list not done by then; provider.connect_timeout_s sets the deadline; "
         "`virsh -c " + harness::text::shell_quote(uri.text) + " list` asks by hand)";
}

}  // namespace harness::pool::libvirt
