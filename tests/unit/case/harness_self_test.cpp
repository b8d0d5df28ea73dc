// SelfAccounting (harness_self.hpp) over a /proc tree the test writes: the executor's usage
// (proc/self) and its agent parent's (proc/<ppid>, named by its cmdline) at the start, at the
// first and after the last tick. The schedule's CPU is the sum of both; the agent's part is
// reported on its own (outcome_json.harness_self.schedule.agent_cpu_ns).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "harness/case/run/case_outcome.hpp"
#include "harness/case/run/harness_self.hpp"
#include "tests/common/temp_dir.hpp"

namespace {

/// outcome_json.harness_self of a case outcome holding `h`.
nlohmann::json as_outcome(const harness::case_::HarnessSelf& h) {
  harness::case_::CaseOutcome o;
  o.harness_self = h;
  return harness::case_::outcome_json(o)["harness_self"];
}

void put(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

/// A /proc/<pid>/stat line with utime and stime in clock ticks (fields 14 and 15).
std::string stat_line(long utime, long stime) {
  return "1 (harness-case) S 1 1 1 0 -1 0 0 0 0 0 " + std::to_string(utime) + " " + std::to_string(stime) +
         " 0 0 20 0 1 0\n";
}

/// Writes both processes' CPU (ticks) and peak RSS.
void usage(const test_support::TempDir& t, const std::string& agent_dir, long exe_ticks, long agent_ticks) {
  put(t / "proc/self/stat", stat_line(exe_ticks, 0));
  put(t / "proc/self/status", "Name:\tharness-case\nVmHWM:\t    7000 kB\n");
  if (!agent_dir.empty()) {
    put(t / (agent_dir + "/stat"), stat_line(agent_ticks - 1, 1));
    put(t / (agent_dir + "/status"), "Name:\tharness-agent\nVmHWM:\t   11000 kB\n");
  }
}

}  // namespace

TEST(HarnessSelf, ScheduleCpuIsExecutorPlusAgentAndNamesTheAgentsPart) {
  test_support::TempDir t("harness-self");
  const std::int64_t tick_ns = 1'000'000'000 / ::sysconf(_SC_CLK_TCK);
  const std::string agent = "proc/" + std::to_string(::getppid());
  put(t / (agent + "/cmdline"), std::string("/usr/bin/harness-agent") + '\0' + "agent" + '\0');
  usage(t, agent, 100, 20);
  harness::kernel::Fs fs(t.path());
  harness::case_::SelfAccounting acc(fs);
  usage(t, agent, 130, 25);  // setup: 30 + 5 ticks, outside the schedule
  acc.schedule_start();
  usage(t, agent, 280, 36);  // the schedule: 150 + 11 ticks
  acc.schedule_end();
  usage(t, agent, 300, 40);
  const auto h = acc.finish(1, std::nullopt, 42);
  ASSERT_TRUE(h.agent);
  ASSERT_TRUE(h.schedule);
  EXPECT_EQ(h.schedule->cpu_ns, (150 + 11) * tick_ns);
  ASSERT_TRUE(h.schedule->agent_cpu_ns);
  EXPECT_EQ(*h.schedule->agent_cpu_ns, 11 * tick_ns);
  EXPECT_EQ(h.schedule->telemetry_cpu_ns, 42);
  EXPECT_EQ(*h.cpu_ns, (200 + 20) * tick_ns);  // the whole case, both processes
  const auto j = as_outcome(h);
  EXPECT_EQ(j["schedule"]["agent_cpu_ns"], 11 * tick_ns);
  EXPECT_EQ(j["schedule"]["cpu_ns"], (150 + 11) * tick_ns);
}

TEST(HarnessSelf, WithoutAnAgentParentTheAgentsPartIsNull) {
  test_support::TempDir t("harness-self");
  const std::int64_t tick_ns = 1'000'000'000 / ::sysconf(_SC_CLK_TCK);
  usage(t, "", 100, 0);  // no proc/<ppid>/cmdline: the parent is not an agent
  harness::kernel::Fs fs(t.path());
  harness::case_::SelfAccounting acc(fs);
  acc.schedule_start();
  usage(t, "", 160, 0);
  acc.schedule_end();
  const auto h = acc.finish(1, std::nullopt, 0);
  EXPECT_FALSE(h.agent);
  ASSERT_TRUE(h.schedule);
  EXPECT_EQ(h.schedule->cpu_ns, 60 * tick_ns);
  EXPECT_FALSE(h.schedule->agent_cpu_ns);
  const auto j = as_outcome(h);
  ASSERT_TRUE(j["schedule"].contains("agent_cpu_ns"));
  EXPECT_TRUE(j["schedule"]["agent_cpu_ns"].is_null());
}
