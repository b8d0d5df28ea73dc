// Hosts file (harness/vm/HOSTS.md): TLS fields, and plain HTTP refused for network hosts
// unless the host opts in; errors name file, line and field.
#include "harness/campaign/campaign.hpp"
#include "harness/campaign/hosts.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace {

std::string write_hosts(const std::string& text) {
  const auto p = std::filesystem::temp_directory_path() / ("hosts-test-" + std::to_string(getpid()) + ".yaml");
  std::ofstream(p) << text;
  return p.string();
}

std::string load_error(const std::string& text) {
  try {
    harness::campaign::load_hosts(write_hosts(text));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(HostsFile, TlsFieldsReachTheClientOptions) {
  const auto hosts = harness::campaign::load_hosts(write_hosts(
      "hosts:\n"
      "  - {name: vm0, url: 'https://10.0.0.10:8080', token_file: /t, tls_pin_sha256: 'sha256//abc='}\n"
      "  - {name: vm1, url: 'https://10.0.0.11:8080', token_file: /t, tls_ca_file: /ca.pem}\n"
      "  - {name: vm2, url: 'http://10.0.0.12:8080', token_file: /t, insecure_plain_http: true}\n"
      "  - {name: vm3, url: 'http://127.0.0.1:40123', token_file: /t, local: true}\n"));
  ASSERT_EQ(hosts.size(), 4u);
  const auto o0 = harness::campaign::client_options(hosts[0]);
  EXPECT_EQ(o0.tls_pin_sha256, "sha256//abc=");
  EXPECT_TRUE(o0.tls_ca_file.empty());
  EXPECT_EQ(harness::campaign::client_options(hosts[1]).tls_ca_file, "/ca.pem");
  EXPECT_TRUE(harness::campaign::client_options(hosts[2]).allow_plain_http);
  EXPECT_FALSE(harness::campaign::client_options(hosts[3]).allow_plain_http);
}

TEST(HostsFile, RebootBetweenCasesIsReadAndRefusedForLocalGuests) {
  const auto hosts = harness::campaign::load_hosts(write_hosts(
      "hosts:\n"
      "  - {name: vm0, url: 'https://10.0.0.10:8080', token_file: /t, tls_pin_sha256: 'sha256//abc=',\n"
      "     reboot_between_cases: true, reboot_timeout_s: 120}\n"
      "  - {name: vm1, url: 'https://10.0.0.11:8080', token_file: /t, tls_pin_sha256: 'sha256//abc='}\n"));
  ASSERT_EQ(hosts.size(), 2u);
  EXPECT_TRUE(hosts[0].reboot_between_cases);
  EXPECT_EQ(hosts[0].reboot_timeout_s, 120);
  EXPECT_FALSE(hosts[1].reboot_between_cases);
  EXPECT_EQ(hosts[1].reboot_timeout_s, 600);
  const std::string local = load_error(
      "hosts:\n"
      "  - name: vm0\n"
      "    url: http://127.0.0.1:40123\n"
      "    token_file: /t\n"
      "    local: true\n"
      "    reboot_between_cases: true\n");
  EXPECT_NE(local.find(":6:"), std::string::npos) << local;
  EXPECT_NE(local.find("hosts[0].reboot_between_cases"), std::string::npos) << local;
  const std::string tiny = load_error(
      "hosts:\n"
      "  - {name: vm0, url: 'http://127.0.0.1:1', token_file: /t, reboot_timeout_s: 1}\n");
  EXPECT_NE(tiny.find("hosts[0].reboot_timeout_s"), std::string::npos) << tiny;
}

TEST(HostsFile, PlainHttpToANetworkAddressIsRefusedWithFileLineAndField) {
  const std::string e = load_error(
      "hosts:\n"
      "  - name: vm0\n"
      "    url: http://10.0.0.10:8080\n"
      "    token_file: /t\n");
  EXPECT_NE(e.find(":3:"), std::string::npos) << e;
  EXPECT_NE(e.find("hosts[0].url"), std::string::npos) << e;
  EXPECT_NE(e.find("clear text"), std::string::npos) << e;
}

TEST(HostsFile, TlsSettingsOnAPlainUrlAreRefused) {
  const std::string e = load_error(
      "hosts:\n"
      "  - {name: vm0, url: 'http://127.0.0.1:8080', token_file: /t, tls_pin_sha256: 'sha256//x'}\n");
  EXPECT_NE(e.find("need an https:// URL"), std::string::npos) << e;
}

}  // namespace
