// `harness fleet cloud-init | pin`: setting up real VMs from the Debian package
// (harness/packaging/README.md).
#include "registry.hpp"

#include "harness/agent/client/tls_pin.hpp"
#include "harness/packaging/cloud_init.hpp"

#include <cstdio>
#include <memory>

namespace {

void add_fleet(CLI::App& app) {
  auto* fleet = app.add_subcommand("fleet", "Set up real VMs: cloud-init user-data, TLS pins");
  fleet->require_subcommand(1);
  {
    auto o = std::make_shared<harness::packaging::CloudInitOptions>();
    auto* sub = fleet->add_subcommand(
        "cloud-init", "Print #cloud-config user-data that installs the reclaim-harness .deb and starts the agent "
                      "(it carries the token, and the TLS key when given, in clear text: keep it private)");
    sub->add_option("--token-file", o->token_file,
                    "Bearer token for every VM (mode 0600); refused when the agent would refuse it (harness/agent/API.md "
                    "\"The token\")")
        ->required();
    sub->add_option("--deb", o->deb_path,
                    "The reclaim-harness .deb to embed (harness/scripts/package.sh; another package or file is "
                    "refused)");
    sub->add_option("--deb-url", o->deb_url, "URL each VM downloads the .deb from (instead of --deb)");
    sub->add_option("--deb-sha256", o->deb_sha256, "SHA-256 of the .deb at --deb-url (64 hex)");
    sub->add_option("--tls-cert", o->tls_cert_file,
                    "Agent certificate (PEM) for every VM; default: each VM makes a self-signed one");
    sub->add_option("--tls-key", o->tls_key_file, "Key of --tls-cert");
    sub->add_option("--swapfile-mib", o->swapfile_mib, "Swapfile size, MiB (default 256, the package's agent.env)");
    sub->callback([o] {
      const std::string y = harness::packaging::cloud_init_user_data(*o);
      std::fputs(y.c_str(), stdout);
      std::fprintf(stderr,
                   "harness: warning: this user-data carries the agent's bearer token%s in clear text: anyone who can "
                   "read it (the file, the cloud's metadata service or console, an image snapshot) can drive the "
                   "agents%s. Keep the file private (chmod 600), and remove it once the VMs are up\n",
                   o->tls_key_file.empty() ? "" : " and the TLS private key",
                   o->tls_key_file.empty() ? "" : " and impersonate them");
      if (y.size() > 16 * 1024)
        std::fprintf(stderr,
                     "harness: note: user-data is %zu KiB; many clouds cap it at 16 KiB (libvirt/NoCloud do not): "
                     "use --deb-url with --deb-sha256 there\n",
                     y.size() / 1024);
      if (!o->tls_cert_file.empty())
        std::fprintf(stderr, "harness: hosts file for these VMs: url https://<vm>:8080, tls_pin_sha256: %s\n",
                     harness::agent::spki_pin_sha256(o->tls_cert_file).c_str());
      else
        std::fprintf(stderr,
                     "harness: no --tls-cert: each VM makes its own self-signed certificate on first boot; its "
                     "hosts-file tls_pin_sha256 is in /etc/reclaim-harness/agent.pin on that VM\n");
    });
  }
  {
    auto cert = std::make_shared<std::string>();
    auto* sub = fleet->add_subcommand(
        "pin", "Print the public-key pin of an agent certificate (the hosts file's tls_pin_sha256)");
    sub->add_option("CERT", *cert, "PEM certificate (e.g. /etc/reclaim-harness/agent.pem on the VM)")->required();
    sub->callback([cert] { std::printf("%s\n", harness::agent::spki_pin_sha256(*cert).c_str()); });
  }
}

const bool kFleetRegistered = harness::cli::register_commands("fleet", add_fleet);

}  // namespace
