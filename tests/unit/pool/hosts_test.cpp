// Hosts file (harness/vm/HOSTS.md) and the hosts engine: TLS fields reach the agent client
// through the engine's guests; plain HTTP refused for network hosts unless the host opts in;
// the strict reader's errors (duplicate key, unknown key with did-you-mean, leading zero)
// name FILE:LINE:COL and the field; `hypervisor:` groups VMs per host and is each guest's host.
#include "harness/pool/agent_wait.hpp"
#include "harness/pool/engine.hpp"
#include "harness/pool/hosts/hosts_file.hpp"
#include "harness/pool/local_guest/local_host.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/unit/campaign/test_files.hpp"

namespace {

using ::testing::HasSubstr;
namespace hp = harness::pool;

/// A well-formed public-key pin (base64 of a SHA-256), as `harness fleet pin CERT` prints one.
const std::string kPin = "sha256//47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=";

std::string write_hosts(const std::string& text) {
  const auto p = std::filesystem::temp_directory_path() / ("hosts-test-" + std::to_string(getpid()) + ".yaml");
  std::ofstream(p) << text;
  return p.string();
}

std::string load_error(const std::string& text) {
  try {
    hp::hosts::load_hosts(write_hosts(text));
  } catch (const harness::yaml::InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

namespace {

/// An EngineConfig of no particular engine (what `--hosts` reads from the campaign).
struct AnyConfig : hp::EngineConfig {
  nlohmann::json settings() const override { return nlohmann::json::object(); }
  std::shared_ptr<hp::EngineConfig> clone() const override { return std::make_shared<AnyConfig>(*this); }
};

/// A hosts pool and what it acquired (declared in this order: the Instances go first).
struct Acquired {
  std::unique_ptr<hp::Pool> pool;
  std::vector<std::unique_ptr<hp::Instance>> instances;
  std::vector<hp::Guest> g;  ///< their addresses
};

Acquired acquire_via_hosts(const std::string& path, const std::vector<std::string>& vms, bool fresh = true) {
  auto cfg = std::make_shared<AnyConfig>();
  cfg->kind = "local-qemu";
  cfg->vms = vms;
  cfg->fresh_guest_per_case = fresh;
  hp::OpenContext oc;
  oc.campaign_file = "t.yaml";
  oc.hosts_file = path;
  Acquired a;
  a.pool = hp::open_pool(cfg, oc);
  EXPECT_EQ(a.pool->kind(), "hosts");
  hp::AcquireContext ac;
  ac.campaign = "t";
  ac.db_path = "/tmp/t.db";
  a.instances = a.pool->acquire(ac);
  a.g = hp::addresses(a.instances);
  return a;
}

TEST(HostsFile, TlsFieldsReachTheClientOptionsThroughTheEngine) {
  const auto a = acquire_via_hosts(
      write_hosts("hosts:\n"
                  "  - {name: vm0, url: 'https://10.0.0.10:8080', token_file: /t, tls_pin_sha256: '" + kPin + "'}\n"
                  "  - {name: vm1, url: 'https://10.0.0.11:8080', token_file: /t, tls_ca_file: /ca.pem}\n"
                  "  - {name: vm2, url: 'http://10.0.0.12:8080', token_file: /t, insecure_plain_http: true}\n"
                  "  - {name: vm3, url: 'http://127.0.0.1:40123', token_file: /t, local: true}\n"),
      {"vm0", "vm1", "vm2", "vm3"});
  const auto& g = a.g;
  ASSERT_EQ(g.size(), 4u);
  const auto o0 = hp::client_options(g[0]);
  EXPECT_EQ(o0.tls_pin_sha256, kPin);
  EXPECT_TRUE(o0.tls_ca_file.empty());
  EXPECT_EQ(hp::client_options(g[1]).tls_ca_file, "/ca.pem");
  EXPECT_TRUE(hp::client_options(g[2]).allow_plain_http);
  EXPECT_FALSE(hp::client_options(g[3]).allow_plain_http);
  // Only the local guest gets a fresh boot per case (the campaign asks for one).
  EXPECT_FALSE(a.instances[0]->fresh_boot_per_case());
  EXPECT_TRUE(a.instances[3]->fresh_boot_per_case());
  EXPECT_EQ(g[3].host, hp::local_guest::local_host_name());
  EXPECT_EQ(g[0].host, "");  // hypervisor not recorded
}

TEST(HostsFile, HypervisorNamesEachGuestsHostAndGroupsTheCapacity) {
  const std::string path = write_hosts(
      "hosts:\n"
      "  - {name: vm0, url: 'http://127.0.0.1:1', token_file: /t, hypervisor: hv1}\n"
      "  - {name: vm1, url: 'http://127.0.0.1:2', token_file: /t, hypervisor: hv2}\n"
      "  - {name: vm2, url: 'http://127.0.0.1:3', token_file: /t, hypervisor: hv1}\n");
  const auto a = acquire_via_hosts(path, {"vm0", "vm1", "vm2"});
  const auto& g = a.g;
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g[0].host, "hv1");
  EXPECT_EQ(g[1].host, "hv2");
  auto cfg = std::make_shared<AnyConfig>();
  cfg->kind = "hosts";
  cfg->vms = {"vm0", "vm1", "vm2"};
  hp::OpenContext oc;
  oc.hosts_file = path;
  const auto cap = hp::open_pool(cfg, oc)->capacity();
  ASSERT_EQ(cap.size(), 2u);
  EXPECT_EQ(cap[0].host, "hv1");
  EXPECT_EQ(cap[0].guests, (std::vector<std::string>{"vm0", "vm2"}));
  EXPECT_EQ(cap[0].cores, 0);  // unknown: not judged
  EXPECT_EQ(cap[1].guests, (std::vector<std::string>{"vm1"}));
}

TEST(HostsFile, AMissingVmIsRefusedNamingTheFile) {
  const std::string path = write_hosts("hosts:\n  - {name: vm0, url: 'http://127.0.0.1:1', token_file: /t}\n");
  try {
    acquire_via_hosts(path, {"vm0", "vm1"});
    ADD_FAILURE() << "accepted";
  } catch (const hp::PoolError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": no host named 'vm1' (the campaign's design uses it)");
  }
}

TEST(HostsFile, RebootBetweenCasesIsReadAndRefusedForLocalGuests) {
  const auto hosts = hp::hosts::load_hosts(write_hosts(
      "hosts:\n"
      "  - {name: vm0, url: 'https://10.0.0.10:8080', token_file: /t, tls_pin_sha256: '" + kPin + "',\n"
      "     reboot_between_cases: true, reboot_timeout_s: 120}\n"
      "  - {name: vm1, url: 'https://10.0.0.11:8080', token_file: /t, tls_pin_sha256: '" + kPin + "'}\n"));
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
  EXPECT_THAT(local, HasSubstr(":6:"));
  EXPECT_THAT(local, HasSubstr("hosts[0].reboot_between_cases"));
  EXPECT_THAT(load_error("hosts:\n  - {name: vm0, url: 'http://127.0.0.1:1', token_file: /t, reboot_timeout_s: 1}\n"),
              HasSubstr("field hosts[0].reboot_timeout_s: must be between 10 and 86400 seconds"));
}

TEST(HostsFile, PlainHttpToANetworkAddressIsRefusedWithFileLineAndField) {
  const std::string e = load_error(
      "hosts:\n"
      "  - name: vm0\n"
      "    url: http://10.0.0.10:8080\n"
      "    token_file: /t\n");
  EXPECT_THAT(e, HasSubstr(":3:"));
  EXPECT_THAT(e, HasSubstr("hosts[0].url"));
  EXPECT_THAT(e, HasSubstr("clear text"));
}

TEST(HostsFile, TlsSettingsOnAPlainUrlAreRefused) {
  EXPECT_THAT(load_error("hosts:\n"
                         "  - {name: vm0, url: 'http://127.0.0.1:8080', token_file: /t, tls_pin_sha256: 'sha256//x'}\n"),
              HasSubstr("need an https:// URL"));
}

// A pin that libcurl could never match is refused when the file is read (plan --hosts),
// not when the first case reaches the agent.
TEST(HostsFile, MalformedTlsPinIsRefusedNamingTheField) {
  const auto with_pin = [](const std::string& pin) {
    return load_error("hosts:\n  - {name: vm0, url: 'https://10.0.0.10:8080', token_file: /t, tls_pin_sha256: '" +
                      pin + "'}\n");
  };
  const std::string bare = kPin.substr(8);  // without "sha256//": the client adds it
  for (const std::string& pin : {std::string("sha256//abc="), kPin + ";", kPin.substr(0, 49) + "!U=",
                                 bare + ";" + bare}) {
    SCOPED_TRACE(pin);
    const std::string e = with_pin(pin);
    EXPECT_THAT(e, HasSubstr(":2:"));
    EXPECT_THAT(e, HasSubstr("hosts[0].tls_pin_sha256"));
    EXPECT_THAT(e, HasSubstr("harness fleet pin CERT"));
  }
  EXPECT_EQ(with_pin(kPin), "(accepted)");
  EXPECT_EQ(with_pin(bare), "(accepted)");
  EXPECT_EQ(with_pin(kPin + ";sha256//LCa0a2j/xo/5m0U8HTBBNBNCLXBkg7+g+YpeiGJm564="), "(accepted)");
}

// The strict reader every YAML input shares: the hosts file's own errors.
TEST(HostsFile, DuplicateKeyIsRefusedNamingBothPlaces) {
  const std::string text =
      "hosts:\n"
      "  - name: vm0\n"
      "    url: http://127.0.0.1:1\n"
      "    token_file: /t\n"
      "    url: http://127.0.0.1:2\n";
  const std::string path = write_hosts(text);
  try {
    hp::hosts::load_hosts(path);
    ADD_FAILURE() << "accepted";
  } catch (const harness::yaml::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ":5:5: field hosts[0].url: duplicate key (first given at " + path + ":3:5)");
  }
}

TEST(HostsFile, UnknownKeyIsRefusedWithDidYouMeanAndItsPlace) {
  const std::string path = write_hosts(
      "hosts:\n"
      "  - name: vm0\n"
      "    url: http://127.0.0.1:1\n"
      "    token_file: /t\n"
      "    reboot_between_case: true\n");
  try {
    hp::hosts::load_hosts(path);
    ADD_FAILURE() << "accepted";
  } catch (const harness::yaml::InputError& e) {
    EXPECT_EQ(std::string(e.what()), path + ":5:5: field hosts[0].reboot_between_case: unknown key (did you mean "
                                            "'reboot_between_cases'?)");
  }
  EXPECT_THAT(load_error("hosts:\n  - {name: vm0, url: 'http://127.0.0.1:1', token_file: /t, colour: blue}\n"),
              HasSubstr("field hosts[0].colour: unknown key"));
  EXPECT_THAT(load_error("hosts:\n  - {name: vm0, url: 'http://127.0.0.1:1', token_file: /t}\nextra: 1\n"),
              HasSubstr(":3:1: field extra: unknown key"));
  EXPECT_THAT(load_error("hosts:\n  - {name: vm0, url: 'http://127.0.0.1:1'}\n"),
              HasSubstr(":2:5: field hosts[0].token_file: missing (required)"));
}

TEST(HostsFile, LeadingZeroIsRefused) {
  const std::string path = write_hosts(
      "hosts:\n"
      "  - name: vm0\n"
      "    url: http://127.0.0.1:1\n"
      "    token_file: /t\n"
      "    reboot_timeout_s: 0600\n");
  try {
    hp::hosts::load_hosts(path);
    ADD_FAILURE() << "accepted";
  } catch (const harness::yaml::InputError& e) {
    EXPECT_EQ(std::string(e.what()), path + ":5:23: field hosts[0].reboot_timeout_s: '0600' has a leading zero (YAML "
                                            "1.1 would read it as octal); write it without");
  }
}

TEST(HostsFile, SyntaxErrorsAndWrongShapesNameThePlace) {
  EXPECT_THAT(load_error("hosts: [\n"), HasSubstr("YAML syntax"));
  EXPECT_THAT(load_error("- vm0\n"), HasSubstr(":1:1: field hosts: expected a mapping with a list `hosts:`"));
  EXPECT_THAT(load_error("hosts:\n  - vm0\n"), HasSubstr(":2:5: field hosts[0]: expected a mapping"));
  EXPECT_THAT(load_error("hosts:\n  - {name: vm0, url: 'http://127.0.0.1:1', token_file: /t, local: maybe}\n"),
              HasSubstr("field hosts[0].local: cannot read 'maybe' as a boolean"));
  try {
    hp::hosts::load_hosts("/nonexistent/hosts.yaml");
    ADD_FAILURE() << "accepted";
  } catch (const harness::yaml::InputError& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/hosts.yaml: cannot open");
  }
}

}  // namespace

// A VM someone else created (no `local: true`): its Instance cannot boot it, cannot tell
// whether it runs and has no console; the runner then records no engine evidence and waits
// for the agent instead of booting.
TEST(HostsFile, AnInstanceOfAVmSomeoneElseCreatedCanTellNothing) {
  auto a = acquire_via_hosts(write_hosts("hosts:\n  - {name: vm0, url: 'http://127.0.0.1:1', token_file: /t}\n"), {"vm0"});
  ASSERT_EQ(a.instances.size(), 1u);
  hp::Instance& vm0 = *a.instances[0];
  EXPECT_EQ(vm0.name(), "vm0");
  EXPECT_FALSE(vm0.fresh_boot_per_case());
  EXPECT_EQ(vm0.liveness(), hp::Liveness::Unknown);
  EXPECT_EQ(vm0.diagnose(4096), "");
  try {
    vm0.fresh_boot(hp::BootRequest{});
    ADD_FAILURE() << "a VM without local: true was booted";
  } catch (const hp::BootError& e) {
    EXPECT_EQ(e.guest(), "vm0");
    EXPECT_THAT(e.what(), ::testing::HasSubstr("local: true"));
  }
  vm0.release();  // left running: nothing to stop, no error
}

// What `harness plan` / `harness run --hosts FILE` learn of the file before anything boots:
// read by the hosts engine (preview_hosts), never by the runner.
TEST(HostsFile, PreviewSaysWhichVmsAreNotBootedAndWhichAreMissing) {
  const std::string path = write_hosts(
      "hosts:\n"
      "  - {name: vm0, url: 'http://127.0.0.1:1', token_file: /t, reboot_between_cases: true}\n"
      "  - {name: vm1, url: 'http://127.0.0.1:2', token_file: /t, local: true}\n");
  const auto p = hp::hosts::preview_hosts(path, {"vm0", "vm1"}, "c.yaml");
  EXPECT_TRUE(p.reboot_between_cases);
  EXPECT_EQ(p.not_booted, (std::vector<std::string>{"vm0"}));
  EXPECT_FALSE(hp::hosts::preview_hosts(path, {"vm1"}, "c.yaml").reboot_between_cases);
  try {
    hp::hosts::preview_hosts(path, {"vm0", "vm1", "vm2", "vm3"}, "c.yaml");
    ADD_FAILURE() << "a hosts file without vm2 and vm3 was accepted";
  } catch (const hp::PoolError& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ": no host named vm2, vm3 (c.yaml uses 4 VM(s); the file lists vm0, vm1)");
  }
  const auto none = hp::hosts::preview_hosts("/nonexistent/hosts.yaml", {"vm0"}, "c.yaml");
  EXPECT_FALSE(none.reboot_between_cases);
  EXPECT_TRUE(none.not_booted.empty());
}

// Issue 59: a campaign's local guests take free slots, so its hosts file may list vm0 served by
// local guest vm1 (`local_guest:`); the key is only for `local: true` entries.
TEST(HostsFile, LocalGuestNamesTheSlotOfALocalEntryOnly) {
  const auto e = hp::hosts::load_hosts(write_hosts("hosts:\n  - name: vm0\n    local_guest: vm1\n    url: http://127.0.0.1:4\n"
                                                   "    token_file: /t\n    local: true\n"));
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].name, "vm0");
  EXPECT_EQ(e[0].local_guest, "vm1");
  EXPECT_THAT(load_error("hosts:\n  - name: vm0\n    local_guest: vm1\n    url: http://127.0.0.1:4\n    token_file: /t\n"),
              HasSubstr(":3:18: field hosts[0].local_guest: names a local guest: only with `local: true`"));
  EXPECT_THAT(load_error("hosts:\n  - name: vm0\n    local_guest: 'a b'\n    url: http://127.0.0.1:4\n    token_file: /t\n"
                         "    local: true\n"),
              HasSubstr("field hosts[0].local_guest: 'a b' does not match"));
}
