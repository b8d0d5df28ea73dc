// `harness run` of a one-triplet campaign with provider.kind: libvirt over two host entries
// of a lab this test starts (libvirt_lab.sh: libvirtd, virtlogd, a loopback sshd): vm0 on
// qemu:///system, vm1 over qemu+ssh (tests/vm/pool_libvirt/libvirt-campaign.yaml; its seed
// puts the triplet on vm1). The runner is killed with SIGKILL in case 2's pressure phase
// (its domains keep running), then the same command adopts them and finishes. Asserts: the
// three cases completed, each once, with one attempt each; case 2 taken over; every case
// names the URI of its guest's host; the domain XML stored with each attempt has 1 vCPU,
// 1 GiB and no balloon; after the run no domain of the campaign is defined or running, and
// `harness vm down --campaign FILE` finds none; the capacity table names the ssh URI as the
// same machine as qemu:///system, and on a 2-core machine every case records the overcommit
// the campaign allows. Prints wall times and boot-to-ready per case.
#include "harness/pool/host_identity.hpp"
#include "harness/pool/libvirt/virt.hpp"
#include "results/db.hpp"
#include "tests/common/campaign_vm.hpp"
#include "tests/common/db_query.hpp"
#include "tests/common/guest_exec.hpp"
#include "tests/common/slurp.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using harness::pool::libvirt::Conn;
using harness::pool::libvirt::open_connection;
using harness::pool::libvirt::StoragePool;

namespace {

const std::string kSrc = std::string(HARNESS_SOURCE_DIR) + "/tests/vm/pool_libvirt/";
const std::string kPrefix = "rhcamp-";                    // provider.name_prefix of the campaign
const std::string kStoragePool = "reclaim-harness-camptest";  // provider.storage_pool

std::map<std::string, std::string> read_env(const fs::path& f) {
  std::map<std::string, std::string> m;
  std::ifstream in(f);
  for (std::string line; std::getline(in, line);)
    if (const auto eq = line.find('='); eq != std::string::npos) m[line.substr(0, eq)] = line.substr(eq + 1);
  return m;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (auto p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

/// Domains (defined or running) of the campaign's prefix on `uri`, by name.
std::vector<std::string> campaign_domains(const std::string& uri) {
  Conn c = open_connection(uri);
  virDomainPtr* doms = nullptr;
  const int n = virConnectListAllDomains(c.get(), &doms, 0);
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    const std::string name = virDomainGetName(doms[i]);
    if (name.rfind(kPrefix, 0) == 0) out.push_back(name + (virDomainIsActive(doms[i]) == 1 ? " (running)" : " (defined)"));
    virDomainFree(doms[i]);
  }
  std::free(doms);
  std::sort(out.begin(), out.end());  // libvirt lists by domain id, which a fresh boot renews
  return out;
}

class LibvirtCampaign : public ::testing::Test {
 protected:
  void SetUp() override {
    lab_dir_ = vm_.dir + "/lab";
    ASSERT_EQ(vm_.harness("vm image").code, 0) << "see " << vm_.log;
    ASSERT_EQ(test_support::sh("bash " + kSrc + "libvirt_lab.sh start " + lab_dir_ + " >> " + vm_.log + " 2>&1"), 0)
        << test_support::slurp(vm_.log);
    lab_started_ = true;
    const auto env = read_env(lab_dir_ + "/lab.env");
    system_uri_ = env.count("LAB_SYSTEM_URI") ? env.at("LAB_SYSTEM_URI") : "";
    ssh_uri_ = env.count("LAB_SSH_URI") ? env.at("LAB_SSH_URI") : "";
    ASSERT_FALSE(system_uri_.empty() || ssh_uri_.empty()) << "lab.env incomplete; see " << vm_.log;
    campaign_ = vm_.dir + "/libvirt-campaign.yaml";
    std::ofstream(campaign_) << replace_all(replace_all(test_support::slurp(kSrc + "libvirt-campaign.yaml"), "@SYSTEM_URI@",
                                                        system_uri_),
                                            "@SSH_URI@", ssh_uri_);
    db_ = vm_.dir + "/libvirt.db";
  }

  void TearDown() override {
    if (!lab_started_) return;
    // whatever a failed assertion left, images included, then the test's storage pool
    vm_.harness("vm down --campaign " + campaign_ + " --images");
    try {
      Conn c = open_connection("qemu:///system");
      if (StoragePool p{virStoragePoolLookupByName(c.get(), kStoragePool.c_str())}) {
        virStoragePoolDestroy(p.get());
        virStoragePoolDelete(p.get(), 0);
        virStoragePoolUndefine(p.get());
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cleanup: %s\n", e.what());
    }
    test_support::sh("bash " + kSrc + "libvirt_lab.sh stop " + lab_dir_ + " >> " + vm_.log + " 2>&1");
    if (!HasFailure()) fs::remove_all(vm_.dir);
  }

  /// `harness run CAMPAIGN --db DB --plain` in the background (output appended to the log).
  pid_t spawn_run() const {
    const pid_t pid = fork();
    if (pid == 0) {
      std::freopen(vm_.log.c_str(), "a", stdout);
      std::freopen(vm_.log.c_str(), "a", stderr);
      setenv("XDG_CACHE_HOME", vm_.xdg.c_str(), 1);
      const std::string harness = test_support::harness_binary();
      execl(harness.c_str(), harness.c_str(), "run", campaign_.c_str(), "--db", db_.c_str(), "--plain",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    return pid;
  }

  test_support::CampaignVm vm_{"libvirt"};
  std::string lab_dir_, system_uri_, ssh_uri_, campaign_, db_;
  bool lab_started_ = false;
};

}  // namespace

TEST_F(LibvirtCampaign, OneTripletOverTwoHostsSurvivesAKilledRunnerAndLeavesNoDomain) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string case2 = "(SELECT case_id FROM schedule ORDER BY ordinal LIMIT 1 OFFSET 1)";

  // 1. Killed (SIGKILL) once case 2 is in its pressure phase: the guest keeps running it.
  const pid_t first = spawn_run();
  ASSERT_TRUE(test_support::wait_for_db(db_,
                       "SELECT count(*) FROM attempts WHERE case_id = " + case2 +
                           " AND status = 'running' AND json_extract(detail_json, '$.phase') = 'pressure'",
                       std::chrono::seconds(480)))
      << "case 2 never reached the pressure phase; see " << vm_.log;
  ASSERT_EQ(kill(first, SIGKILL), 0);
  int st = 0;
  waitpid(first, &st, 0);
  ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) << "the runner ended before it was killed; see " << vm_.log;
  const double killed_at = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // the killed runner's domains are still there, running
  EXPECT_EQ(campaign_domains(system_uri_),
            (std::vector<std::string>{kPrefix + "vm0 (running)", kPrefix + "vm1 (running)"}));

  // 2. The same command adopts the domains, takes case 2 over and finishes the campaign.
  const auto t1 = std::chrono::steady_clock::now();
  const auto second = vm_.harness("run " + campaign_ + " --db " + db_ + " --plain");
  const double second_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  std::printf("libvirt campaign: first runner killed after %.0f s, second runner %.0f s, total %.0f s wall\n", killed_at,
              second_s, killed_at + second_s);
  ASSERT_EQ(second.code, 0) << "see " << vm_.log;
  EXPECT_NE(second.out.find("vm1: adopted domain " + kPrefix + "vm1 on " + ssh_uri_), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("engine libvirt: 2 guest(s) on " + system_uri_ + " (vm0"), std::string::npos) << second.out;

  results::Db db(db_, results::Db::Mode::ReadOnly);
  // nothing lost, nothing run twice
  EXPECT_EQ(test_support::db_count(db, "SELECT count(*) FROM schedule WHERE state = 'completed'"), 3) << "see " << vm_.log;
  EXPECT_EQ(test_support::db_count(db, "SELECT count(*) FROM cases"), 3);
  EXPECT_EQ(test_support::db_count(db, "SELECT count(DISTINCT case_id) FROM cases WHERE status = 'completed'"), 3);
  EXPECT_EQ(test_support::db_count(db, "SELECT count(*) FROM attempts"), 3);
  EXPECT_EQ(test_support::db_count(db, "SELECT count(*) FROM attempts WHERE status = 'running'"), 0);
  EXPECT_EQ(test_support::db_text(db, "SELECT status || '/' || kind FROM attempts WHERE case_id = " + case2), "completed/adopted");
  EXPECT_EQ(test_support::db_count(db, "SELECT json_extract(detail_json, '$.runner_interrupted') FROM attempts WHERE case_id = " + case2), 1);
  // every case names the URI of its guest's host (seed 1: the triplet is vm1's, over ssh)
  // The two URIs reach one machine: one host for the capacity rule, whose two 1-vCPU guests
  // are over cores - 1 on a 2-core machine (provider.overcommit: true lets it run), so every
  // case records exactly that verdict.
  const bool over = 2 > static_cast<int>(std::thread::hardware_concurrency()) - 1;
  EXPECT_EQ(test_support::db_count(db, std::string("SELECT count(*) FROM cases WHERE overcommitted = ") + (over ? "1" : "0")),
            3)
      << "see " << vm_.log;
  EXPECT_NE(test_support::slurp(vm_.log).find(harness::pool::host_identity(ssh_uri_) + " is the same machine as " +
                                               harness::pool::host_identity(system_uri_)), std::string::npos)
      << "the capacity table names the alias; see " << vm_.log;
  EXPECT_EQ(test_support::db_count(db, "SELECT count(*) FROM cases WHERE vm = 'vm1' AND host_uri = '" +
                                           harness::pool::host_identity(ssh_uri_) + "'"),
            3)
      << test_support::db_text(db, "SELECT group_concat(vm || ' ' || ifnull(host_uri, 'NULL'), '; ') FROM cases");
  EXPECT_EQ(test_support::db_count(db, "SELECT count(*) FROM cases WHERE accelerator IN ('kvm', 'tcg')"), 3);

  // the domain XML libvirt ran, stored with each attempt: the campaign's vm block, no balloon
  results::Stmt q(db, "SELECT case_id, attempt, json_extract(detail_json, '$.boot.boot_to_ready_s') FROM attempts ORDER BY case_id");
  int stored = 0;
  while (q.step()) {
    const std::string id = q.text(0);
    const fs::path xml = fs::path(vm_.dir) / ".consoles" / (id + ".a" + std::to_string(q.int64(1))) / "domain.xml";
    std::printf("libvirt campaign: %s boot-to-ready %.1f s\n", id.c_str(), q.is_null(2) ? -1.0 : q.real(2));
    ASSERT_TRUE(fs::exists(xml)) << xml;
    const std::string x = test_support::slurp(xml);
    EXPECT_NE(x.find("<vcpu placement='static'>1</vcpu>"), std::string::npos) << xml;
    EXPECT_NE(x.find("<memory unit='KiB'>1048576</memory>"), std::string::npos) << xml;
    EXPECT_NE(x.find("<memballoon model='none'/>"), std::string::npos) << xml;
    EXPECT_EQ(x.find("virtio-balloon"), std::string::npos) << xml;
    EXPECT_TRUE(fs::exists(xml.parent_path() / "console.log")) << xml.parent_path();
    ++stored;
  }
  EXPECT_EQ(stored, 3);

  // after the run: no domain of the campaign defined or running on either host entry, and
  // `vm down` for the campaign finds nothing to stop
  EXPECT_TRUE(campaign_domains(system_uri_).empty()) << "left on " << system_uri_;
  EXPECT_TRUE(campaign_domains(ssh_uri_).empty()) << "left on the ssh host";
  const auto down = vm_.harness("vm down --campaign " + campaign_ + " --db " + db_);
  EXPECT_EQ(down.code, 0);
  EXPECT_NE(down.out.find("no running guest of campaign libvirt-campaign"), std::string::npos) << down.out;
  // the triplet's first case ran in the boot of acquire, not in a second boot (issue 47 item 8)
  const std::string log = test_support::slurp(vm_.log);
  EXPECT_NE(log.find("serves this case: not booted twice"), std::string::npos) << "see " << vm_.log;
  // --images deletes this campaign's claim and the image no other campaign claims; --purge the pool
  const auto images = vm_.harness("vm down --campaign " + campaign_ + " --images");
  EXPECT_EQ(images.code, 0) << images.out;
  EXPECT_NE(images.out.find(": deleted volume rh-"), std::string::npos) << images.out;
  const auto purge = vm_.harness("vm down --campaign " + campaign_ + " --purge");
  EXPECT_EQ(purge.code, 0) << purge.out;
  EXPECT_NE(purge.out.find("removed storage pool " + kStoragePool), std::string::npos) << purge.out;
  Conn c = open_connection(system_uri_);
  EXPECT_FALSE(StoragePool(virStoragePoolLookupByName(c.get(), kStoragePool.c_str())));
}
