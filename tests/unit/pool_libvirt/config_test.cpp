// The libvirt provider block: accepted blocks, placement across hosts, and every refusal
// naming FILE:LINE:COL and the field.
#include "harness/pool/libvirt/config.hpp"

#include "harness/campaign/model/campaign.hpp"
#include "harness/pool/engine.hpp"
#include "harness/yaml/strict_yaml.hpp"
#include "tests/common/small_campaign.hpp"

#include <gtest/gtest.h>

#include <string>

using harness::pool::libvirt::LibvirtConfig;
using harness::pool::libvirt::parse_libvirt_block;
using harness::pool::libvirt::parse_uri;

namespace {

/// The provider block of `yaml` as the campaign loader reads it: the strict reader, `kind`
/// and `overcommit` consumed, the engine's keys, then finish().
LibvirtConfig parse(const std::string& yaml) {
  const YAML::Node root = harness::yaml::parse(yaml, "c.yaml");
  harness::yaml::Section s(root["provider"], "provider", "c.yaml");
  s.scalar<std::string>("kind");
  s.scalar<bool>("overcommit", false);
  LibvirtConfig c = parse_libvirt_block(s);
  s.finish();
  return c;
}

/// The message of the InputError that parsing `yaml` throws ("" when it does not throw).
std::string error_of(const std::string& yaml) {
  try {
    parse(yaml);
  } catch (const harness::yaml::InputError& e) {
    return e.what();
  }
  return "";
}

/// A whole campaign whose provider block is `provider` (one line, line 6) and design lists `vms`.
std::string campaign(const std::string& provider, const std::string& vms = "") {
  return test_support::small_campaign_yaml(provider, "repeats: 1, dose_mib: 96" + (vms.empty() ? "" : ", vms: " + vms));
}

}  // namespace

TEST(LibvirtConfig, IssueExampleAndPlacementAcrossHosts) {
  const auto c = parse(
      "provider: {kind: libvirt, hosts: [{uri: \"qemu:///system\", guests: 3}, "
      "{uri: \"qemu+ssh://user@hv2/system\", guests: 6}]}\n");
  ASSERT_EQ(c.hosts.size(), 2u);
  EXPECT_EQ(c.hosts[0].uri.transport, "");
  EXPECT_EQ(c.hosts[1].uri.transport, "ssh");
  EXPECT_EQ(c.hosts[1].uri.user, "user");
  EXPECT_EQ(c.hosts[1].uri.host, "hv2");
  const auto names = c.guest_names();
  ASSERT_EQ(names.size(), 9u);
  EXPECT_EQ(names.front(), "vm0");
  EXPECT_EQ(names.back(), "vm8");
  EXPECT_EQ(c.host_of(0), 0u);
  EXPECT_EQ(c.host_of(2), 0u);
  EXPECT_EQ(c.host_of(3), 1u);
  EXPECT_EQ(c.host_of(8), 1u);
  EXPECT_THROW(c.host_of(9), std::out_of_range);
  // defaults
  EXPECT_TRUE(c.fresh_guest_per_case);
  EXPECT_EQ(c.accelerator, "auto");
  EXPECT_EQ(c.name_prefix, "harness-");
  EXPECT_EQ(c.storage_pool, "reclaim-harness");
  EXPECT_EQ(c.storage_path, "/var/lib/libvirt/reclaim-harness");
  EXPECT_EQ(c.boot_timeout_s, 300);
  EXPECT_EQ(c.connect_timeout_s, 30);
}

TEST(LibvirtConfig, EveryOptionalKey) {
  const auto c = parse(R"(provider:
  kind: libvirt
  hosts:
    - uri: "qemu+ssh://root@127.0.0.1:2222/system?keyfile=/srv/lab/id%20key&no_verify=1"
      guests: 1
  fresh_guest_per_case: false
  accelerator: tcg
  overcommit: true
  name_prefix: lab1-
  storage_pool: rh2
  storage_path: /srv/rh
  boot_timeout_s: 120
  connect_timeout_s: 5
)");
  EXPECT_FALSE(c.fresh_guest_per_case);
  EXPECT_EQ(c.accelerator, "tcg");
  EXPECT_EQ(c.name_prefix, "lab1-");
  EXPECT_EQ(c.storage_pool, "rh2");
  EXPECT_EQ(c.storage_path, "/srv/rh");
  EXPECT_EQ(c.boot_timeout_s, 120);
  EXPECT_EQ(c.connect_timeout_s, 5);
  const auto& u = c.hosts[0].uri;
  EXPECT_EQ(u.port, 2222);
  EXPECT_EQ(u.keyfile, "/srv/lab/id key");
  EXPECT_TRUE(u.no_verify);
  EXPECT_TRUE(u.same_machine());
  EXPECT_TRUE(u.tunnel());
}

TEST(LibvirtConfig, Errors) {
  EXPECT_EQ(error_of("provider:\n  kind: libvirt\n  hosts: [{uri: 'qemu:///system', guests: 1}]\n  overcomit: true\n"),
            "c.yaml:4:3: field provider.overcomit: unknown key (did you mean 'overcommit'?)");
  EXPECT_EQ(error_of("provider:\n  kind: libvirt\n  host: [{uri: 'qemu:///system', guests: 1}]\n"),
            "c.yaml:3:3: field provider.host: unknown key (did you mean 'hosts'? it is required and missing)");
  EXPECT_EQ(error_of("provider:\n  kind: libvirt\n  hosts: []\n"),
            "c.yaml:3:10: field provider.hosts: expected a non-empty list of {uri: ..., guests: N}");
  EXPECT_EQ(error_of("provider:\n  kind: libvirt\n  hosts:\n    - {uri: 'qemu:///system', guests: 0}\n"),
            "c.yaml:4:39: field provider.hosts[0].guests: must be > 0 (got 0)");
  EXPECT_EQ(error_of("provider:\n  kind: libvirt\n  hosts:\n    - {uri: 'qemu:///system', guests: 03}\n"),
            "c.yaml:4:39: field provider.hosts[0].guests: '03' has a leading zero (YAML 1.1 would read it as octal); "
            "write it without");
  EXPECT_EQ(error_of("provider:\n  kind: libvirt\n  hosts:\n    - {uri: 'qemu:///system'}\n"),
            "c.yaml:4:7: field provider.hosts[0].guests: missing (required)");
  EXPECT_EQ(error_of("provider:\n  kind: libvirt\n  hosts:\n    - {uri: 'qemu:///system', guests: 1}\n"
                     "    - {uri: 'qemu:///system', guests: 2}\n"),
            "c.yaml:5:13: field provider.hosts[1].uri: 'qemu:///system' is already provider.hosts[0].uri (give one entry "
            "per host with its guest count)");
  // one host identity (harness/pool/host_identity.hpp): a moved key file is not another host
  EXPECT_EQ(error_of("provider:\n  kind: libvirt\n  hosts:\n    - {uri: 'qemu+ssh://lab@hv2/system?keyfile=/a', guests: 1}\n"
                     "    - {uri: 'qemu+ssh://lab@hv2/system?keyfile=/b&no_verify=1', guests: 2}\n"),
            "c.yaml:5:13: field provider.hosts[1].uri: 'qemu+ssh://lab@hv2/system?keyfile=/b&no_verify=1' is already "
            "provider.hosts[0].uri ('qemu+ssh://lab@hv2/system?keyfile=/a': the same host, qemu+ssh://lab@hv2/system, with "
            "other credentials or options) (give one entry per host with its guest count)");
  EXPECT_EQ(error_of("provider:\n  kind: libvirt\n  hosts: [{uri: 'qemu:///system', guests: 1}]\n  accelerator: hvf\n"),
            "c.yaml:4:16: field provider.accelerator: 'hvf' is not one of auto, kvm, tcg");
  EXPECT_EQ(error_of("provider:\n  kind: libvirt\n  hosts: [{uri: 'qemu:///system', guests: 1}]\n  name_prefix: 'a b'\n"),
            "c.yaml:4:16: field provider.name_prefix: 'a b' does not match [A-Za-z0-9_.-]{0,32}");
  EXPECT_EQ(error_of("provider:\n  kind: libvirt\n  hosts:\n    - {uri: 'qemu:///system', guests: 1, gests: 2}\n"),
            "c.yaml:4:42: field provider.hosts[0].gests: unknown key (did you mean 'guests'?)");
  EXPECT_EQ(error_of("provider:\n  kind: libvirt\n  hosts: [{uri: 'qemu:///system', guests: 1}]\n  boot_timeout_s: 7200\n"),
            "c.yaml:4:19: field provider.boot_timeout_s: must be <= 3600 (got 7200)");
  EXPECT_EQ(error_of("provider:\n  kind: libvirt\n  hosts: [{uri: 'qemu:///system', guests: 1}]\n  connect_timeout_s: 0\n"),
            "c.yaml:4:22: field provider.connect_timeout_s: must be > 0 (got 0)");
}

TEST(LibvirtEngine, RegisteredAndParsedThroughTheCampaignLoader) {
  const auto* e = harness::pool::find_engine("libvirt");
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(e->capabilities.fresh_boot_per_case);
  EXPECT_TRUE(e->capabilities.boot_variants);
  EXPECT_TRUE(static_cast<bool>(e->down));
  const auto c = harness::campaign::parse_campaign(
      campaign("{kind: libvirt, overcommit: true, fresh_guest_per_case: false, hosts: [{uri: 'qemu:///system', guests: 1}, "
               "{uri: 'qemu+ssh://u@127.0.0.1/system', guests: 2}]}"),
      "c.yaml");
  EXPECT_EQ(c.provider, "libvirt");
  EXPECT_EQ(c.vms, (std::vector<std::string>{"vm0", "vm1", "vm2"}));
  ASSERT_TRUE(c.engine);
  EXPECT_TRUE(c.engine->overcommit);
  EXPECT_FALSE(c.engine->fresh_guest_per_case);
  const auto cfg = std::dynamic_pointer_cast<const harness::pool::libvirt::Config>(c.engine);
  ASSERT_TRUE(cfg);
  EXPECT_EQ(cfg->libvirt.host_of(2), 1u);
  const auto st = c.engine->settings();
  EXPECT_EQ(st["hosts"][1]["uri"], "qemu+ssh://u@127.0.0.1/system");
  EXPECT_EQ(st["hosts"][1]["guests"], 2);
  EXPECT_EQ(st.count("overcommit"), 0u);
  EXPECT_EQ(st.count("kind"), 0u);
  EXPECT_TRUE(c.engine->clone()->settings() == st);
  // errors name the campaign file, line and column, from the engine and from the design
  try {
    harness::campaign::parse_campaign(campaign("{kind: libvirt, hosts: [{uri: 'qemu:///system', guests: 1}], acelerator: tcg}"),
                                      "c.yaml");
    FAIL() << "a misspelt key was accepted";
  } catch (const std::exception& ex) {
    EXPECT_STREQ(ex.what(), "c.yaml:6:72: field provider.acelerator: unknown key (did you mean 'accelerator'?)");
  }
  try {
    harness::campaign::parse_campaign(campaign("{kind: libvirt, hosts: [{uri: 'qemu:///system', guests: 2}]}", "[vm0]"),
                                      "c.yaml");
    FAIL() << "design.vms with one of the two placed guests was accepted";
  } catch (const std::exception& ex) {
    EXPECT_NE(std::string(ex.what()).find("field design.vms: lists 1 VMs but provider.hosts places 2 (vm0, vm1"),
              std::string::npos)
        << ex.what();
  }
}

TEST(LibvirtConfig, UriRefusals) {
  const std::string head = "provider:\n  kind: libvirt\n  hosts:\n    - uri: ";
  auto err = [&](const std::string& uri) { return error_of(head + "'" + uri + "'\n      guests: 1\n"); };
  EXPECT_EQ(err("qemu+tcp://hv2/system"),
            "c.yaml:4:12: field provider.hosts[0].uri: 'qemu+tcp://hv2/system': a remote hypervisor must be reached over "
            "ssh (qemu+ssh://USER@hv2/system): the runner reaches each guest's agent through an ssh tunnel to the "
            "hypervisor's loopback address (README.md in harness/pool/libvirt)");
  EXPECT_NE(err("qemu:///session").find("must name the system instance"), std::string::npos);
  EXPECT_NE(err("xen:///system").find("drives qemu domains"), std::string::npos);
  EXPECT_NE(err("qemu+ftp://hv2/system").find("unknown transport 'ftp'"), std::string::npos);
  EXPECT_NE(err("qemu+ssh://hv2:99999/system").find("port 99999 is out of range"), std::string::npos);
  EXPECT_NE(err("qemu+ssh://hv2:x/system").find("port 'x' is not a number"), std::string::npos);
  EXPECT_NE(err("hv2").find("is not a libvirt URI"), std::string::npos);
  EXPECT_NE(err("qemu+ssh:///system").find("an ssh URI needs a host"), std::string::npos);
  // loopback over tcp is this machine: no tunnel needed, accepted
  EXPECT_EQ(err("qemu+tcp://127.0.0.1/system"), "");
  // libvirt's ssh transport does not read known_hosts= (issue 47 item 8): refused with the way that works
  const std::string kh = err("qemu+ssh://lab@hv2/system?known_hosts=/k");
  EXPECT_EQ(kh.rfind("c.yaml:4:12: field provider.hosts[0].uri: 'qemu+ssh://lab@hv2/system?known_hosts=/k': known_hosts= "
                     "is not read by libvirt's ssh transport", 0), 0u) << kh;
  EXPECT_NE(kh.find("~/.ssh/known_hosts of the user running the harness"), std::string::npos) << kh;
  EXPECT_NE(kh.find("-o UserKnownHostsFile=FILE"), std::string::npos) << kh;
  // the transports that read it keep it
  EXPECT_EQ(err("qemu+libssh://lab@hv2/system?known_hosts=/k"), "");
  EXPECT_EQ(err("qemu+ssh://lab@hv2/system?keyfile=/id&command=/usr/local/bin/lab-ssh"), "");
}

TEST(LibvirtConfig, UriParts) {
  const auto u = parse_uri("qemu+ssh://me@[::1]:2200/system?known_hosts=/k&keyfile=/id");
  EXPECT_EQ(u.driver, "qemu");
  EXPECT_EQ(u.host, "[::1]");
  EXPECT_EQ(u.port, 2200);
  EXPECT_EQ(u.path, "/system");
  EXPECT_EQ(u.known_hosts, "/k");
  EXPECT_EQ(u.keyfile, "/id");
  EXPECT_FALSE(u.no_verify);
  EXPECT_TRUE(u.same_machine());
  EXPECT_FALSE(parse_uri("qemu+ssh://hv2.lab/system").same_machine());
  EXPECT_TRUE(parse_uri("qemu:///system").same_machine());
  EXPECT_FALSE(parse_uri("qemu:///system").tunnel());
}
