// The reboot between cases (harness/agent/routes/reboot.hpp) with the test's reboot command.
#include "harness/agent/routes/reboot.hpp"
#include "tests/common/temp_dir.hpp"
#include "tests/common/wait_until.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace {
using namespace harness::agent;
using nlohmann::json;

TEST(Reboot, RefusedWithoutPermissionAndWhileBusy) {
  test_support::TempDir tmp("reboot");
  Registry reg(tmp.path());
  {
    Rebooter r(reg, false, "true");
    httplib::Response res;
    r.request(res);
    EXPECT_EQ(res.status, 403);
    EXPECT_TRUE(reg.busy.idle());
  }
  Rebooter r(reg, true, "true");
  reg.busy = Busy{Busy::Holder::Case, "c", -1};
  httplib::Response res;
  r.request(res);
  EXPECT_EQ(res.status, 409);
  EXPECT_EQ(json::parse(res.body)["running_case_id"], "c");
}

TEST(Reboot, AnsweredFirstThenRunsHoldingTheSlot) {
  test_support::TempDir tmp("reboot");
  Registry reg(tmp.path());
  const std::string done = tmp / "rebooted";
  Rebooter r(reg, true, "touch " + done);
  httplib::Response res;
  r.request(res);
  EXPECT_EQ(res.status, 202);
  const json j = json::parse(res.body);
  EXPECT_EQ(j["boot_id"], boot_id());
  EXPECT_EQ(j["reboot_in_ms"], 500);
  {
    std::lock_guard<std::mutex> lk(reg.mu);
    if (!std::filesystem::exists(done)) {
      EXPECT_EQ(reg.busy.holder, Busy::Holder::Reboot);
    }
  }
  ASSERT_TRUE(test_support::wait_until([&] { return std::filesystem::exists(done); }, std::chrono::seconds(30)));
  ASSERT_TRUE(test_support::wait_until(
      [&] {
        std::lock_guard<std::mutex> lk(reg.mu);
        return reg.busy.idle();
      },
      std::chrono::seconds(30)))
      << "a reboot command that returns frees the slot";
}

TEST(Reboot, BootIdIsTheKernels) {
  EXPECT_EQ(boot_id().size(), 36u) << boot_id();
}

}  // namespace
