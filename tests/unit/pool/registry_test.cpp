// The engine registry (engine.hpp): the built-in engines register themselves by kind, a
// duplicate or malformed registration is refused, open_pool picks the campaign's engine or
// the hosts engine for --hosts; each engine's provider block is parsed by that engine with
// FILE:LINE:COL errors (through the campaign loader).
#include "harness/campaign/model/campaign.hpp"
#include "harness/pool/engine.hpp"
#include "harness/pool/local_qemu/config.hpp"
#include "harness/pool/local_guest/local_host.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "tests/unit/campaign/test_files.hpp"

namespace hp = harness::pool;
namespace hc = harness::campaign;
using ::testing::HasSubstr;

namespace {

std::string smoke_text() { return testfiles::read(std::string(HARNESS_SOURCE_DIR) + "/campaigns/smoke.yaml"); }

/// The smoke campaign with its provider block replaced by `provider` (YAML lines).
std::string with_provider(const std::string& provider) {
  std::string t = smoke_text();
  const auto a = t.find("provider:");
  const auto b = t.find("\nphases_s:");
  return t.replace(a, b - a, provider);
}

/// 1-based line of `needle` in `text`.
int line_in(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  std::string l;
  for (int n = 1; std::getline(in, l); ++n)
    if (l.find(needle) != std::string::npos) return n;
  return -1;
}

std::string parse_error(const std::string& text) {
  try {
    hc::parse_campaign(text, "p.yaml");
  } catch (const hc::CampaignError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST(EngineRegistry, BuiltInEnginesRegisterThemselvesByKind) {
  const auto kinds = hp::engine_kinds();
  EXPECT_THAT(kinds, ::testing::Contains("local-qemu"));
  EXPECT_THAT(kinds, ::testing::Contains("hosts"));
  EXPECT_TRUE(std::is_sorted(kinds.begin(), kinds.end()));
  const auto* lq = hp::find_engine("local-qemu");
  ASSERT_NE(lq, nullptr);
  EXPECT_TRUE(lq->capabilities.fresh_boot_per_case);
  EXPECT_TRUE(lq->capabilities.boot_variants);
  const auto* h = hp::find_engine("hosts");
  ASSERT_NE(h, nullptr);
  EXPECT_FALSE(h->capabilities.boot_variants);
  EXPECT_FALSE(h->capabilities.fresh_boot_per_case);
  EXPECT_EQ(hp::find_engine("no-such-engine"), nullptr);
  EXPECT_THAT(hp::engine_kinds_where([](const hp::Capabilities& c) { return c.boot_variants; }),
              HasSubstr("local-qemu"));
}

TEST(EngineRegistry, DuplicateOrMalformedRegistrationsAreRefused) {
  const auto* lq = hp::find_engine("local-qemu");
  ASSERT_NE(lq, nullptr);
  hp::Engine dup = *lq;
  EXPECT_THROW(hp::register_engine(dup), std::logic_error);
  hp::Engine bad = *lq;
  bad.kind = "Bad Kind";
  EXPECT_THROW(hp::register_engine(bad), std::logic_error);
  hp::Engine noparse = *lq;
  noparse.kind = "registry-test-noparse";
  noparse.parse = nullptr;
  EXPECT_THROW(hp::register_engine(noparse), std::logic_error);
  EXPECT_EQ(hp::find_engine("registry-test-noparse"), nullptr);
}

TEST(EngineRegistry, OpenPoolTakesTheCampaignsEngineOrHostsForAHostsFile) {
  const auto cfg = hp::local_qemu::make_config(2);
  hp::OpenContext oc;
  oc.campaign_file = "c.yaml";
  const auto p = hp::open_pool(cfg, oc);
  EXPECT_EQ(p->kind(), "local-qemu");
  EXPECT_THAT(p->describe(), HasSubstr("engine local-qemu: 2 guest(s) (vm0, vm1) on this machine (" +
                                       hp::local_guest::local_host_name() + ")"));
  EXPECT_THAT(p->describe(), HasSubstr("accelerator request auto"));
  const auto cap = p->capacity();
  ASSERT_EQ(cap.size(), 1u);
  EXPECT_EQ(cap[0].host, hp::local_guest::local_host_name());
  EXPECT_GT(cap[0].cores, 0);
  EXPECT_GT(cap[0].memory_mib, 0);
  EXPECT_EQ(cap[0].guests, (std::vector<std::string>{"vm0", "vm1"}));
  oc.hosts_file = "/nonexistent/hosts.yaml";
  const auto h = hp::open_pool(cfg, oc);
  EXPECT_EQ(h->kind(), "hosts");
  EXPECT_THROW(hp::open_pool(nullptr, oc), hp::PoolError);
}

TEST(LocalQemuEngine, ParsesItsBlockAndNamesGuestsVm0ToVmN) {
  const auto c = hc::parse_campaign(
      with_provider("provider:\n  kind: local-qemu\n  count: 3\n  fresh_guest_per_case: false\n  accelerator: tcg\n"),
      "p.yaml");
  EXPECT_EQ(c.provider, "local-qemu");
  ASSERT_NE(c.engine, nullptr);
  EXPECT_EQ(c.vms, (std::vector<std::string>{"vm0", "vm1", "vm2"}));
  EXPECT_FALSE(c.engine->fresh_guest_per_case);
  EXPECT_FALSE(c.engine->overcommit);
  const auto* lq = dynamic_cast<const hp::local_qemu::Config*>(c.engine.get());
  ASSERT_NE(lq, nullptr);
  EXPECT_EQ(lq->count, 3);
  EXPECT_EQ(lq->accelerator, "tcg");
  EXPECT_EQ(c.engine->settings(), (nlohmann::json{{"count", 3},
                                                  {"hosts_file", ""},
                                                  {"vms", {"vm0", "vm1", "vm2"}},
                                                  {"fresh_guest_per_case", false},
                                                  {"accelerator", "tcg"}}));
  const auto o = hc::parse_campaign(with_provider("provider: {kind: local-qemu, count: 1, overcommit: true}\n"), "p.yaml");
  EXPECT_TRUE(o.engine->overcommit);
  EXPECT_TRUE(o.engine->fresh_guest_per_case);  // the engine's default
}

TEST(LocalQemuEngine, ErrorsNameFileLineColumnAndField) {
  const std::string a = with_provider("provider:\n  kind: local-qemu\n  cont: 2\n");
  EXPECT_EQ(parse_error(a), "p.yaml:" + std::to_string(line_in(a, "cont: 2")) +
                                ":3: field provider.cont: unknown key (did you mean 'count'? it is required and missing)");
  const std::string b = with_provider("provider:\n  kind: local-qemu\n  count: 02\n");
  EXPECT_EQ(parse_error(b), "p.yaml:" + std::to_string(line_in(b, "count: 02")) +
                                ":10: field provider.count: '02' has a leading zero (YAML 1.1 would read it as octal); "
                                "write it without");
  const std::string c = with_provider("provider:\n  kind: local-qemu\n  count: 1\n  accelerator: hvf\n");
  EXPECT_EQ(parse_error(c), "p.yaml:" + std::to_string(line_in(c, "accelerator: hvf")) +
                                ":16: field provider.accelerator: 'hvf' is not one of auto, kvm, tcg");
  const std::string d = with_provider("provider:\n  kind: local-qemu\n  count: 1\n  vms: [vm0]\n");
  EXPECT_EQ(parse_error(d), "p.yaml:" + std::to_string(line_in(d, "vms: [vm0]")) + ":3: field provider.vms: unknown key");
  const std::string e = with_provider("provider:\n  kind: local-qemu\n  count: 1\n  overcommit: sometimes\n");
  EXPECT_THAT(parse_error(e), HasSubstr("field provider.overcommit: cannot read 'sometimes' as a boolean"));
  const std::string f = with_provider("provider:\n  kind: local-qemu\n  count: 1\n  count: 2\n");
  EXPECT_THAT(parse_error(f), HasSubstr("field provider.count: duplicate key (first given at p.yaml:"));
}

TEST(HostsEngine, ParsesItsBlockWithFileLineColumnErrors) {
  const auto c = hc::parse_campaign(
      with_provider("provider:\n  kind: hosts\n  hosts_file: h.yaml\n  vms: [a0, b1]\n"), "p.yaml");
  EXPECT_EQ(c.vms, (std::vector<std::string>{"a0", "b1"}));
  EXPECT_FALSE(c.engine->fresh_guest_per_case);
  EXPECT_EQ(c.engine->settings(), (nlohmann::json{{"count", 2},
                                                  {"hosts_file", "h.yaml"},
                                                  {"vms", {"a0", "b1"}},
                                                  {"fresh_guest_per_case", false},
                                                  {"accelerator", "auto"}}));
  const std::string a = with_provider("provider:\n  kind: hosts\n  hosts_fil: h.yaml\n  vms: [vm0]\n");
  EXPECT_EQ(parse_error(a), "p.yaml:" + std::to_string(line_in(a, "hosts_fil:")) +
                                ":3: field provider.hosts_fil: unknown key (did you mean 'hosts_file'?)");
  const std::string b = with_provider("provider:\n  kind: hosts\n  vms: [vm0, 'bad name']\n");
  EXPECT_THAT(parse_error(b), HasSubstr("field provider.vms[1]: 'bad name' does not match [A-Za-z0-9_-]{1,32}"));
  const std::string c2 = with_provider("provider:\n  kind: hosts\n  vms: []\n");
  EXPECT_THAT(parse_error(c2), HasSubstr("field provider.vms: expected a non-empty list of VM names"));
  const std::string d = with_provider("provider:\n  kind: hosts\n  count: 2\n  vms: [vm0]\n");
  EXPECT_THAT(parse_error(d), HasSubstr("field provider.count: unknown key"));
}

TEST(EngineRegistry, AnUnknownKindListsTheRegisteredEngines) {
  const std::string a = with_provider("provider:\n  kind: cloud\n");
  const std::string e = parse_error(a);
  EXPECT_THAT(e, HasSubstr("p.yaml:" + std::to_string(line_in(a, "kind: cloud")) + ":9: field provider.kind: 'cloud' "
                           "is not one of "));
  EXPECT_THAT(e, HasSubstr("hosts"));
  EXPECT_THAT(e, HasSubstr("local-qemu"));
}
