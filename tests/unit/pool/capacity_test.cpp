// Capacity before anything boots (harness/pool/capacity.hpp): guest vCPUs beyond cores - 1
// or guest memory beyond what is available is refused, naming host, guests, cores and
// memory; provider.overcommit turns the refusal into a recorded overcommit; unknown hosts
// are not judged; guests already running count against cores, not against memory.
#include "harness/pool/capacity.hpp"
#include "harness/pool/local_guest/local_host.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace hp = harness::pool;
using ::testing::HasSubstr;

namespace {

hp::HostCapacity host(const std::string& name, int cores, std::int64_t mib, int guests) {
  hp::HostCapacity h;
  h.host = name;
  h.cores = cores;
  h.memory_mib = mib;
  for (int i = 0; i < guests; ++i) h.guests.push_back("vm" + std::to_string(i));
  return h;
}

}  // namespace

TEST(Capacity, NineGuestsOnTwoCoresAreRefusedNamingHostGuestsCoresAndMemory) {
  const auto v = hp::check_capacity({host("local:ws", 2, 20000, 9)}, {1, 1024}, false, "local-qemu");
  EXPECT_FALSE(v.ok);
  ASSERT_EQ(v.problems.size(), 1u);
  EXPECT_EQ(v.problems[0],
            "host local:ws: 9 guest(s) (vm0, vm1, vm2, vm3, vm4, vm5, vm6, vm7, vm8) of 1 vCPU / 1024 MiB, on 2 online "
            "core(s) (at most 1 guest vCPU(s): cores - 1) and 20000 MiB available: 9 guest vCPU(s) > 2 online core(s) "
            "- 1");
  EXPECT_THAT(v.refusal(), HasSubstr("refused before anything boots"));
  EXPECT_THAT(v.refusal(), HasSubstr("set provider.overcommit: true"));
  EXPECT_THAT(v.refusal("give --overcommit"), HasSubstr("give --overcommit"));
  EXPECT_THAT(v.table, HasSubstr("REFUSED"));
  EXPECT_EQ(v.overcommitted("local:ws"), std::optional<bool>(true));  // judged over (refused here)
}

TEST(Capacity, OneGuestPerSpareCoreFitsAndMemoryIsJudgedToo) {
  EXPECT_TRUE(hp::check_capacity({host("h", 2, 2048, 1)}, {1, 1024}, false, "e").ok);
  EXPECT_TRUE(hp::check_capacity({host("h", 4, 3072, 3)}, {1, 1024}, false, "e").ok);
  const auto mem = hp::check_capacity({host("h", 16, 3000, 3)}, {1, 1024}, false, "e");
  EXPECT_FALSE(mem.ok);
  ASSERT_EQ(mem.problems.size(), 1u);
  EXPECT_THAT(mem.problems[0], HasSubstr("3072 MiB of guests to boot > 3000 MiB available"));
  const auto both = hp::check_capacity({host("h", 2, 1000, 2)}, {1, 1024}, false, "e");
  EXPECT_THAT(both.problems[0], HasSubstr("2 guest vCPU(s) > 2 online core(s) - 1; 2048 MiB of guests to boot > 1000"));
  // vCPUs per guest count: two 2-vCPU guests need 5 cores.
  EXPECT_FALSE(hp::check_capacity({host("h", 4, 9000, 2)}, {2, 1024}, false, "e").ok);
  EXPECT_TRUE(hp::check_capacity({host("h", 5, 9000, 2)}, {2, 1024}, false, "e").ok);
  EXPECT_EQ(*hp::check_capacity({host("h", 5, 9000, 2)}, {2, 1024}, false, "e").overcommitted("h"), false);
}

TEST(Capacity, OvercommitAllowsItAndMarksTheHost) {
  const auto v = hp::check_capacity({host("local:ws", 2, 20000, 9), host("hv2", 64, 100000, 2)}, {1, 1024}, true,
                                    "local-qemu");
  EXPECT_TRUE(v.ok);
  EXPECT_TRUE(v.overcommit_allowed);
  EXPECT_EQ(v.problems.size(), 1u);
  EXPECT_EQ(v.overcommitted("local:ws"), std::optional<bool>(true));
  EXPECT_EQ(v.overcommitted("hv2"), std::optional<bool>(false));
  EXPECT_EQ(v.refusal(), "");
  EXPECT_THAT(v.table, HasSubstr("OVERCOMMITTED (provider.overcommit: true)"));
  EXPECT_THAT(v.table, HasSubstr("overcommitted: host local:ws: 9 guest(s)"));
}

TEST(Capacity, UnknownHostsAreNotJudged) {
  const auto v = hp::check_capacity({host("(hypervisor not recorded)", 0, 0, 40)}, {1, 1024}, false, "hosts");
  EXPECT_TRUE(v.ok);
  EXPECT_EQ(v.overcommitted("(hypervisor not recorded)"), std::nullopt);
  EXPECT_THAT(v.table, HasSubstr("not judged (cores and memory unknown to this engine)"));
}

// A host that did not answer is not judged (a lab is planned offline) and is listed as such;
// the verdict names it for `harness run`, which refuses to start then (runner.cpp).
TEST(Capacity, AnUnreachableHostIsNotJudgedAndSaysItIsJudgedAgainAtRun) {
  auto down = host("qemu+ssh://lab@hv2/system", 0, 0, 3);
  down.unreachable = "libvirt qemu+ssh://lab@hv2/system: cannot connect: ssh: Could not resolve hostname hv2";
  // overcommit changes nothing for a host nobody could ask
  for (bool overcommit : {false, true}) {
    const auto v = hp::check_capacity({host("qemu:///system", 8, 20000, 2), down}, {1, 1024}, overcommit, "libvirt");
    EXPECT_TRUE(v.ok);
    EXPECT_TRUE(v.problems.empty());
    ASSERT_EQ(v.unreachable.size(), 1u);
    EXPECT_EQ(v.unreachable[0], "qemu+ssh://lab@hv2/system: " + down.unreachable);
    EXPECT_THAT(v.table, HasSubstr("not judged: host qemu+ssh://lab@hv2/system unreachable; judged again at run"));
    EXPECT_THAT(v.table, HasSubstr("unreachable: qemu+ssh://lab@hv2/system: libvirt"));
    EXPECT_EQ(v.overcommitted("qemu+ssh://lab@hv2/system"), std::nullopt);
    EXPECT_EQ(v.overcommitted("qemu:///system"), std::optional<bool>(false));
  }
  // cores and memory an engine left in an unreachable row are not judged either
  auto stale = host("h", 2, 100, 9);
  stale.unreachable = "no answer";
  EXPECT_TRUE(hp::check_capacity({stale}, {1, 1024}, false, "e").ok);
}

TEST(Capacity, RunningGuestsCountAgainstCoresNotAgainstMemory) {
  auto h = host("local:ws", 4, 1500, 2);
  h.running = {"vm0"};          // adopted: its memory is already taken from MemAvailable
  auto v = hp::check_capacity({h}, {1, 1024}, false, "local-qemu");
  EXPECT_TRUE(v.ok) << v.table;  // 2 vCPUs <= 3, 1024 MiB to boot <= 1500
  h.others = {"vm7", "vm8"};     // another campaign's guests share the cores
  v = hp::check_capacity({h}, {1, 1024}, false, "local-qemu");
  EXPECT_FALSE(v.ok);
  EXPECT_THAT(v.problems[0], HasSubstr("plus 2 other running guest(s) (vm7, vm8), 1 of them already running"));
  EXPECT_THAT(v.problems[0], HasSubstr("4 guest vCPU(s) > 4 online core(s) - 1"));
}

// Two libvirt URIs that reach one machine (the engine merges them into one host with the
// second as an alias): the guests of both count against that machine's cores, a case on
// either URI finds the verdict, and the table and the refusal name both URIs.
TEST(Capacity, AnAliasOfAHostSharesItsCoresAndItsVerdict) {
  auto h = host("qemu:///system", 2, 20000, 2);
  h.aliases = {"qemu+ssh://root@127.0.0.1:2222/system"};
  const auto v = hp::check_capacity({h}, {1, 1024}, false, "libvirt");
  EXPECT_FALSE(v.ok);
  ASSERT_EQ(v.problems.size(), 1u);
  EXPECT_THAT(v.problems[0], HasSubstr("host qemu:///system (= qemu+ssh://root@127.0.0.1:2222/system): 2 guest(s)"));
  EXPECT_THAT(v.problems[0], HasSubstr("2 guest vCPU(s) > 2 online core(s) - 1"));
  EXPECT_EQ(v.overcommitted("qemu:///system"), std::optional<bool>(true));
  EXPECT_EQ(v.overcommitted("qemu+ssh://root@127.0.0.1:2222/system"), std::optional<bool>(true));
  EXPECT_EQ(v.overcommitted("qemu+ssh://elsewhere/system"), std::nullopt);
  EXPECT_THAT(v.table, HasSubstr("qemu+ssh://root@127.0.0.1:2222/system is the same machine as qemu:///system"));
}

TEST(LocalHost, MemAvailableIsReadInMibAndOnlineCpusArePositive) {
  EXPECT_EQ(hp::local_guest::mem_available_mib("MemTotal:       24683584 kB\nMemFree:  1 kB\nMemAvailable:   21164460 kB\n"),
            20668);
  EXPECT_EQ(hp::local_guest::mem_available_mib("MemTotal: 1 kB\n"), -1);
  EXPECT_GT(hp::local_guest::online_cpus(), 0);
  EXPECT_EQ(hp::local_guest::local_host_name().rfind("local:", 0), 0u);
}
