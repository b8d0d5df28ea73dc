// Measured per-host costs between runs (harness/pool/host_costs.hpp): boots as the median of
// the last ones under one accelerator, the last trial and upload, one file per engine and
// host identity, nothing known when nothing was recorded or the file is unreadable.
#include "harness/pool/host_costs.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
namespace hp = harness::pool;

namespace {

class HostCostsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() / ("host-costs-test-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

}  // namespace

TEST_F(HostCostsTest, NothingRecordedIsNotMeasured) {
  const auto c = hp::read_host_costs("libvirt", "qemu+ssh://hv2/system", dir_);
  EXPECT_FALSE(c.boot.known());
  EXPECT_FALSE(c.kvm_trial.known());
  EXPECT_FALSE(c.upload.known());
  EXPECT_EQ(c.host, "qemu+ssh://hv2/system");
}

TEST_F(HostCostsTest, BootsAreTheMedianOfTheLastOnesUnderOneAccelerator) {
  const std::string h = "qemu+ssh://lab@hv2/system?keyfile=/k";
  const auto before = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch()).count();
  for (double s : {40.0, 30.0, 35.0}) hp::record_boot("libvirt", h, "tcg", s, dir_);
  auto c = hp::read_host_costs("libvirt", h, dir_);
  EXPECT_DOUBLE_EQ(c.boot.seconds, 35.0);
  EXPECT_EQ(c.boot.samples, 3);
  EXPECT_EQ(c.accelerator, "tcg");
  EXPECT_GE(c.boot.unix_time, before);
  // the same host under another key file is the same host (host_identity.hpp)
  EXPECT_DOUBLE_EQ(hp::read_host_costs("libvirt", "qemu+ssh://lab@hv2/system?keyfile=/moved", dir_).boot.seconds, 35.0);
  // another engine, another host: nothing
  EXPECT_FALSE(hp::read_host_costs("local-qemu", h, dir_).boot.known());
  EXPECT_FALSE(hp::read_host_costs("libvirt", "qemu+ssh://lab@hv3/system", dir_).boot.known());
  // an even count: the mean of the middle two
  hp::record_boot("libvirt", h, "tcg", 50.0, dir_);
  EXPECT_DOUBLE_EQ(hp::read_host_costs("libvirt", h, dir_).boot.seconds, 37.5);
  // only the last kBootSamples count
  for (std::size_t i = 0; i < hp::kBootSamples; ++i) hp::record_boot("libvirt", h, "tcg", 20.0, dir_);
  c = hp::read_host_costs("libvirt", h, dir_);
  EXPECT_DOUBLE_EQ(c.boot.seconds, 20.0);
  EXPECT_EQ(c.boot.samples, static_cast<int>(hp::kBootSamples));
  // a boot under another accelerator starts the list again
  hp::record_boot("libvirt", h, "kvm", 4.0, dir_);
  c = hp::read_host_costs("libvirt", h, dir_);
  EXPECT_DOUBLE_EQ(c.boot.seconds, 4.0);
  EXPECT_EQ(c.boot.samples, 1);
  EXPECT_EQ(c.accelerator, "kvm");
}

TEST_F(HostCostsTest, TrialAndUploadAreTheLastOnesAndAnUnreadableFileIsNothing) {
  const std::string h = "local:ws";
  hp::record_kvm_trial("local-qemu", h, 31.0, dir_);
  hp::record_kvm_trial("local-qemu", h, 2.5, dir_);
  hp::record_upload("local-qemu", h, 12.0, dir_);
  hp::record_boot("local-qemu", h, "kvm", -1, dir_);  // unknown boot time: not recorded
  auto c = hp::read_host_costs("local-qemu", h, dir_);
  EXPECT_DOUBLE_EQ(c.kvm_trial.seconds, 2.5);
  EXPECT_DOUBLE_EQ(c.upload.seconds, 12.0);
  EXPECT_FALSE(c.boot.known());
  ASSERT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator{}), 1);
  for (const auto& f : fs::directory_iterator(dir_)) {
    EXPECT_EQ(f.path().filename().string().rfind("host-costs-", 0), 0u) << f.path();
    std::ofstream(f.path()) << "{not json";
  }
  c = hp::read_host_costs("local-qemu", h, dir_);
  EXPECT_FALSE(c.kvm_trial.known());
  EXPECT_FALSE(c.upload.known());
}

TEST(HostCosts, UtcDate) { EXPECT_EQ(hp::utc_date(1764892800), "2025-12-05"); }
