// Why a libvirt domain start is slow (harness/pool/libvirt/slow_start.hpp): the rule, the
// /dev/kvm permission check against libvirt's qemu user on a fixture root, and libvirtd's
// debug lines captured on libvirt 9.0 with /dev/kvm at 0600 and 0660
// (tests/fixtures/libvirt-9.0-kvm-probe).
#include "harness/pool/libvirt/slow_start.hpp"

#include "harness/vm/paths.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace harness::pool::libvirt;

namespace {

const std::string kFixtures = std::string(HARNESS_SOURCE_DIR) + "/tests/fixtures/libvirt-9.0-kvm-probe/";

/// A machine root with /dev/kvm (a regular file standing in for the device: only its owner,
/// group and mode are read), /etc/passwd and /etc/group. The file's group is named "kvm".
class KvmRoot : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("slow-start-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "dev");
    fs::create_directories(root_ / "etc/libvirt");
    std::ofstream(root_ / "dev/kvm") << "";
    struct stat st{};
    ASSERT_EQ(::stat((root_ / "dev/kvm").c_str(), &st), 0);
    gid_ = st.st_gid;
    uid_ = st.st_uid;
  }
  void TearDown() override { fs::remove_all(root_); }

  /// libvirt-qemu (uid 64055) and another user; group kvm = the file's group, listing `kvm_members`.
  void users(const std::string& kvm_members) {
    std::ofstream(root_ / "etc/passwd") << "owner:x:" << uid_ << ":" << gid_ << "::/:/bin/sh\n"
                                        << "libvirt-qemu:x:64055:64055:Libvirt Qemu:/var/lib/libvirt:/usr/sbin/nologin\n"
                                        << "qemu:x:64056:64056::/:/usr/sbin/nologin\n";
    std::ofstream(root_ / "etc/group") << "kvm:x:" << gid_ << ":" << kvm_members << "\nlibvirt-qemu:x:64055:libvirt-qemu\n";
  }
  void mode(unsigned m) { ASSERT_EQ(::chmod((root_ / "dev/kvm").c_str(), m), 0); }

  fs::path root_;
  unsigned uid_ = 0, gid_ = 0;
};

}  // namespace

TEST(SlowStart, StartDominatesWhenItIsMostOfBootToReadyAndNotShort) {
  EXPECT_TRUE(start_dominates(58.6, 70.0));    // the 0600 lab
  EXPECT_TRUE(start_dominates(10.0, 20.0));    // exactly half
  EXPECT_FALSE(start_dominates(9.9, 20.0));
  EXPECT_FALSE(start_dominates(1.0, 40.0));    // 0660: about 1 s of a TCG boot
  EXPECT_FALSE(start_dominates(4.9, 6.0));     // under the floor
  EXPECT_FALSE(start_dominates(-1, 30.0));     // not measured
  EXPECT_FALSE(start_dominates(30.0, -1));
}

TEST(SlowStart, MayReadWriteChecksOwnerThenGroupThenOther) {
  const RunAs lq{"libvirt-qemu", 64055, {107, 64055}};
  EXPECT_FALSE(may_read_write({0, 0, 0600}, lq));     // no udev
  EXPECT_TRUE(may_read_write({0, 107, 0660}, lq));    // udev: root:kvm 0660
  EXPECT_FALSE(may_read_write({0, 107, 0640}, lq));   // read only
  EXPECT_TRUE(may_read_write({0, 0, 0666}, lq));
  EXPECT_FALSE(may_read_write({64055, 107, 0066}, lq));  // the owner gets the owner bits only
  EXPECT_TRUE(may_read_write({0, 0, 0600}, RunAs{"root", 0, {0}}));
}

TEST_F(KvmRoot, QemuRunUserIsDebiansUnlessQemuConfSaysOtherwise) {
  users("libvirt-qemu");
  auto u = qemu_run_user(root_.string());
  ASSERT_TRUE(u);
  EXPECT_EQ(u->name, "libvirt-qemu");
  EXPECT_EQ(u->uid, 64055u);
  std::vector<unsigned> want = {gid_, 64055u};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(u->gids, want);
  std::ofstream(root_ / "etc/libvirt/qemu.conf") << "#user = \"root\"\nuser = \"qemu\"\ngroup = \"kvm\"\n";
  u = qemu_run_user(root_.string());
  ASSERT_TRUE(u);
  EXPECT_EQ(u->name, "qemu");
  EXPECT_EQ(u->gids, std::vector<unsigned>{gid_});
  std::ofstream(root_ / "etc/libvirt/qemu.conf") << "user = \"nobody-here\"\n";
  EXPECT_FALSE(qemu_run_user(root_.string()));
}

TEST_F(KvmRoot, PermissionCauseNamesModeUserAndFix) {
  users("libvirt-qemu");
  mode(0600);
  const auto checked = check_kvm_permission(root_.string());
  ASSERT_FALSE(checked);
  const std::string& why = checked.error().message;
  EXPECT_NE(why.find("/dev/kvm is owner:kvm 0600 and libvirt's qemu user libvirt-qemu (groups "), std::string::npos) << why;
  EXPECT_NE(why.find("cannot open it, so libvirt drops its cached qemu capabilities"), std::string::npos) << why;
  EXPECT_NE(why.find("`chgrp kvm /dev/kvm; chmod 0660 /dev/kvm`"), std::string::npos) << why;
  mode(0660);
  EXPECT_TRUE(check_kvm_permission(root_.string()));  // as udev leaves it
  users("");                                          // 0660, but libvirt-qemu is not in group kvm
  EXPECT_FALSE(check_kvm_permission(root_.string()));
  fs::remove(root_ / "dev/kvm");
  EXPECT_TRUE(check_kvm_permission(root_.string()));  // no /dev/kvm: nothing to say
}

TEST(SlowStart, ProbeLogCauseFromCapturedLines) {
  const auto at0600 = probe_log_summary(harness::vm::read_file(kFixtures + "libvirtd-kvm-0600.log"));
  ASSERT_TRUE(at0600);
  EXPECT_EQ(*at0600,
            "libvirtd's log shows 28 qemu capability probes; cache dropped because KVM was enabled when probing but is "
            "not available now (x28)");
  // at 0660 the first start sees /dev/kvm changed, keeps the cache and probes nothing
  EXPECT_FALSE(probe_log_summary(harness::vm::read_file(kFixtures + "libvirtd-kvm-0660.log")));
  EXPECT_FALSE(probe_log_summary(""));
}

TEST_F(KvmRoot, LocalCausesReadTheLogFromTheStartOn) {
  users("libvirt-qemu");
  mode(0660);
  const std::string log = (root_ / "libvirtd.log").string();
  const std::string probes = harness::vm::read_file(kFixtures + "libvirtd-kvm-0600.log");
  std::ofstream(log) << probes << harness::vm::read_file(kFixtures + "libvirtd-kvm-0660.log");
  EXPECT_TRUE(local_slow_start_findings(root_.string(), log, probes.size()).empty());  // only what this start wrote
  auto c = local_slow_start_findings(root_.string(), log, 0);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NE(c[0].find("28 qemu capability probes"), std::string::npos);
  mode(0600);
  c = local_slow_start_findings(root_.string(), (root_ / "no-such.log").string(), 0);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].rfind("/dev/kvm is owner:kvm 0600", 0), 0u) << c[0];
  EXPECT_EQ(log_size(log), fs::file_size(log));
  EXPECT_EQ(log_size((root_ / "no-such.log").string()), 0u);
}

TEST(SlowStart, NoteSaysHowLongAndWhy) {
  EXPECT_EQ(slow_start_note("harness-vm0", "qemu:///system", 58.56, 70.04, {"cause one", "cause two"}),
            "harness-vm0 on qemu:///system: the domain start took 58.6 s of the 70.0 s boot-to-ready; cause one; cause two");
  const std::string remote = slow_start_note("harness-vm3", "qemu+ssh://lab@hv2/system", 40, 60, {});
  EXPECT_NE(remote.find("took 40.0 s of the 60.0 s boot-to-ready; libvirt probes qemu again"), std::string::npos) << remote;
  EXPECT_NE(remote.find("/dev/kvm on that host"), std::string::npos) << remote;
  EXPECT_NE(remote.find("log_filters=\"1:qemu.qemu_capabilities\""), std::string::npos) << remote;
}
