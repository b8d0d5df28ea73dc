// An agent killed mid-case and started again over the same state directory
// (the old executor's process group still running) settles the case before it answers:
// the old case answers with a final state (not 404), the unclean verdict of its bundle marks
// the VM, and no case starts while the old process group lives.
#include "tests/common/wait_until.hpp"
#include "tests/unit/agent/agent_fixture.hpp"
#include "tests/unit/agent/test_bundle.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

namespace {
using namespace agent_test;

TEST_F(AgentFixture, RestartedAgentSettlesTheCaseOfAKilledOneAndWaitsForItsExecutor) {
  write_bundle((dir / "bundles" / "case-k.db").string(), "case-k", "completed", false, {"swap /dev/zram0 still on"});
  make_bundle("case-next");
  const fs::path release = dir / "release";
  write_exec(dir / "executor.sh",
             "#!/bin/sh\n"
             "out=\"$4\"; id=$(basename \"$(dirname \"$out\")\")\n"
             "echo \"$id\" >> " + marker.string() + "\n"
             "echo $$ > " + (dir / "executor.pid").string() + "\n"
             "echo pressure > \"$out/phase\"\n"
             "cp " + (dir / "bundles").string() + "/$id.db \"$out/$id.db\"\n"
             "[ \"$id\" = case-next ] && exit 0\n"
             "while [ ! -e " + release.string() + " ]; do sleep 0.1; done\n");
  ASSERT_TRUE(start());
  ASSERT_EQ(client().Post("/v1/cases", valid_spec("case-k").dump(), "application/json")->status, 202);
  const pid_t exec_pid = read_pid(dir / "executor.pid");
  ASSERT_GT(exec_pid, 0);
  struct EndGroup {
    pid_t p;
    fs::path release;
    ~EndGroup() {
      { std::ofstream(release) << "1"; }
      ::kill(-p, SIGKILL);
    }
  } end_group{exec_pid, release};
  const fs::path bundle = state / "cases" / "case-k" / "out" / "case-k.db";
  ASSERT_TRUE(test_support::wait_until([&] { return fs::exists(bundle); }, std::chrono::seconds(30)));
  // The agent dies mid-case (SIGKILL: no chance to finish anything); its executor lives on.
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  pid = -1;
  ASSERT_FALSE(live_group_members(exec_pid).empty());

  ASSERT_TRUE(start());
  auto s = client().Get("/v1/cases/case-k");
  ASSERT_TRUE(s);
  ASSERT_EQ(s->status, 200) << "the restarted agent forgot the case: " << s->body;
  const json st = json::parse(s->body);
  EXPECT_EQ(st["state"], "completed") << st.dump();  // the bundle's status
  EXPECT_EQ(st.value(json::json_pointer("/restoration/clean"), json()), false) << st.dump();
  EXPECT_NE(st["error"].get<std::string>().find("settled when the agent restarted"), std::string::npos) << st.dump();
  ASSERT_TRUE(fs::exists(state / "unclean.json")) << "the unclean bundle was never read";
  EXPECT_EQ(json::parse(test_support::slurp(state / "unclean.json"))["case_id"], "case-k");

  const json h = json::parse(client(false).Get("/v1/health")->body);
  EXPECT_EQ(h["accepting_cases"], false) << h.dump();
  EXPECT_EQ(h["busy"], true) << h.dump();
  const std::string group = "process group " + std::to_string(exec_pid);
  EXPECT_NE(h["refusal"].get<std::string>().find(group), std::string::npos) << h.dump();
  // Even with the mark cleared, nothing starts while the old group lives.
  ASSERT_EQ(client().Delete("/v1/unclean")->status, 200);
  auto refused = client().Post("/v1/cases", valid_spec("case-next").dump(), "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 409) << refused->body;
  EXPECT_NE(refused->body.find("executor of case case-k from an earlier agent run (" + group + ")"), std::string::npos)
      << refused->body;
  EXPECT_EQ(runs(), std::vector<std::string>{"case-k"});
  EXPECT_FALSE(fs::exists(state / "cases" / "case-next"));

  // Once that group has ended, cases run again.
  { std::ofstream(release) << "1"; }
  ASSERT_TRUE(test_support::wait_until([&] { return live_group_members(exec_pid).empty(); }, std::chrono::seconds(30)));
  ASSERT_TRUE(test_support::wait_until(
      [&] { return json::parse(client(false).Get("/v1/health")->body)["accepting_cases"] == true; },
      std::chrono::seconds(30)));
  ASSERT_EQ(client().Post("/v1/cases", valid_spec("case-next").dump(), "application/json")->status, 202);
  EXPECT_EQ(wait_final("case-next")["state"], "completed");
}

}  // namespace
