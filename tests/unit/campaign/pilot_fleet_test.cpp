// The pilot on the fleet's vm0, as the study ran it (docs/RESEARCHER.md "Reproducing the pilot and the
// confirmatory study"): `harness run campaigns/pilot.yaml DB --hosts hosts.yaml` with the
// fleet's hosts file (vm0, vm1, vm2 here: fake agents on 127.0.0.1) runs all 16 pilot cases
// on vm0 only, qualifies only vm0, and `harness pilot-select DB` then reads Table 3 from them.
#include "results/db.hpp"

#include "tests/common/fake_agent.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_files.hpp"
#include "tests/common/run_harness.hpp"

using testfiles::TempDir;
using testfiles::write;
using testfiles::write_token;
using ::testing::HasSubstr;

TEST(PilotOnTheFleet, RunsOnVm0OfAFleetHostsFileAndPilotSelectReadsIt) {
  TempDir d;
  write_token(d / "token", "tok\n");
  const std::string commit(40, 'c');  // tests/common/fixed_pin.hpp
  fake::FakeAgent a0(d / "agent0", "tok"), a1(d / "agent1", "tok"), a2(d / "agent2", "tok");
  std::string hosts = "hosts:\n";
  int i = 0;
  for (auto* a : {&a0, &a1, &a2}) {
    a->qualification = fake::passing_qualification(commit);
    a->polls_to_finish = 2;
    hosts += "  - name: vm" + std::to_string(i++) + "\n    url: " + a->url() + "\n    token_file: " + (d / "token") +
             "\n    accelerator: kvm\n";
  }
  write(d / "hosts.yaml", hosts);
  // campaigns/pilot.yaml as shipped, but a fixed pin (this build may be dirty) and quick
  // polling (the fake agent finishes a case in two polls; the real one takes 9 min).
  std::string pilot = testfiles::with_fixed_pin(testfiles::read(std::string(HARNESS_SOURCE_DIR) + "/campaigns/pilot.yaml"));
  const std::string poll = "poll_interval_ms: 2000";
  ASSERT_NE(pilot.find(poll), std::string::npos);
  pilot.replace(pilot.find(poll), poll.size(), "poll_interval_ms: 20");
  write(d / "pilot.yaml", pilot);

  const auto run = test_support::run_harness("run " + (d / "pilot.yaml") + " " + (d / "pilot.db") + " --hosts " +
                                                 (d / "hosts.yaml") + " --plain",
                                             d / "run.log");
  ASSERT_EQ(run.code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("run: 16 planned, 16 completed"));
  EXPECT_EQ(a0.submissions().size(), 16u);
  EXPECT_TRUE(a1.submissions().empty());
  EXPECT_TRUE(a2.submissions().empty());
  EXPECT_GE(a0.qualification_gets.load(), 1);
  EXPECT_EQ(a1.qualification_gets.load(), 0);  // only the campaign's VM is qualified
  EXPECT_EQ(a2.qualification_gets.load(), 0);
  {
    results::Db db(d / "pilot.db", results::Db::Mode::ReadOnly);
    results::Stmt q(db, "SELECT count(*), count(DISTINCT vm), min(vm), min(accelerator) FROM cases WHERE status = "
                        "'completed'");
    ASSERT_TRUE(q.step());
    EXPECT_EQ(q.int64(0), 16);
    EXPECT_EQ(q.int64(1), 1);
    EXPECT_EQ(q.text(2), "vm0");
    EXPECT_EQ(q.text(3), "kvm");  // the hosts file's accelerator
  }
  // Table 3 from the pilot DB: every dose has its four regimes on vm0. The fake bundles carry
  // no zram telemetry, so the rule finds no valid backend telemetry and no dose eligible (exit 1).
  const auto sel = test_support::run_harness("pilot-select " + (d / "pilot.db") + " --format json", d / "sel.log");
  ASSERT_EQ(sel.code, 1) << sel.out;
  const auto j = nlohmann::json::parse(sel.out.substr(sel.out.find('{')));
  int doses = 0;
  for (const auto& t : j["tables"])
    if (t["id"] == "table3_pilot") {
      std::size_t cases_col = 0;
      for (std::size_t c = 0; c < t["column_names"].size(); ++c)
        if (t["column_names"][c] == "cases") cases_col = c;
      for (const auto& row : t["rows"]) {
        ++doses;
        EXPECT_EQ(row[cases_col], 4) << row.dump();
      }
    }
  EXPECT_EQ(doses, 4) << sel.out;
}
