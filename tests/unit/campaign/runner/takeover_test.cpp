// Taking over an interrupted runner's attempt (harness/campaign/runner/takeover.hpp) and the
// runner lock (runner_lock.hpp): what the row becomes and what the dead runner's row says.
#include "harness/campaign/model/campaign.hpp"
#include "harness/campaign/runner/runner_lock.hpp"
#include "harness/campaign/runner/takeover.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <optional>

namespace {

using namespace harness::campaign;
using ::testing::HasSubstr;

TEST(Takeover, TheRowBecomesAdoptedAndKeepsWhatTheDeadRunnerSaw) {
  AttemptRecord row{"c1", 2, "vm0 http://old", 100'000'000'000LL, 0, nullptr};
  row.detail = {{"agent_case_id", "c1.a2-abcd"}, {"runner_pid", 41}, {"submitted", true},
                {"submitted_unix_ns", 101'000'000'000LL}, {"phase", "warmup"}, {"last_seen_unix_ns", 130'000'000'000LL}};
  const auto t = take_over(row, "vm0 http://new", "fallback", 42, 160'000'000'000LL);
  EXPECT_EQ(t.agent_id, "c1.a2-abcd");
  EXPECT_EQ(t.rec.kind, "adopted");
  EXPECT_EQ(t.rec.host, "vm0 http://new");
  EXPECT_EQ(t.rec.started_unix_ns, 100'000'000'000LL);  // the attempt keeps its real start
  EXPECT_TRUE(t.submitted);
  EXPECT_EQ(t.seen.phase, "warmup");
  EXPECT_EQ(t.seen.last_seen_unix_ns, 130'000'000'000LL);
  EXPECT_EQ(t.seen.submitted_unix_ns, 101'000'000'000LL);
  EXPECT_EQ(t.rec.detail["runner_interrupted"], true);
  EXPECT_EQ(t.rec.detail["runner_pid"], 42);
  ASSERT_EQ(t.rec.detail["takeovers"].size(), 1u);
  const auto& k = t.rec.detail["takeovers"][0];
  EXPECT_EQ(k["took_over_unix_ns"], 160'000'000'000LL);
  EXPECT_EQ(k["runner_pid"], 42);
  EXPECT_EQ(k["interrupted_runner_pid"], 41);
  EXPECT_EQ(k["phase_seen_before"], "warmup");
  EXPECT_EQ(k["last_seen_unix_ns"], 130'000'000'000LL);
  EXPECT_EQ(takeover_note(t, 160'000'000'000LL),
            "taking over c1.a2-abcd (attempt 2, started 60 s ago) from an interrupted runner (last phase seen: warmup)");
  // Taken over a second time: the takeovers add up.
  const auto again = take_over(t.rec, "vm0 http://new", "fallback", 43, 170'000'000'000LL);
  ASSERT_EQ(again.rec.detail["takeovers"].size(), 2u);
  EXPECT_EQ(again.rec.detail["takeovers"][1]["interrupted_runner_pid"], 42);
}

TEST(Takeover, ARowFromBeforeSubmissionHasNoPhaseAndTheFallbackId) {
  AttemptRecord row{"c1", 1, "vm0 u", 100'000'000'000LL, 0, nullptr};
  const auto t = take_over(row, "vm0 u", "c1.a1-ffff", 7, 100'000'000'000LL);
  EXPECT_EQ(t.agent_id, "c1.a1-ffff");
  EXPECT_FALSE(t.submitted);
  EXPECT_EQ(t.seen.phase, "");
  EXPECT_EQ(t.seen.submitted_unix_ns, 100'000'000'000LL);  // the row's start stands for the submission
  EXPECT_TRUE(t.rec.detail["takeovers"][0]["interrupted_runner_pid"].is_null());
  EXPECT_EQ(takeover_note(t, 100'000'000'000LL), "taking over c1.a1-ffff (attempt 1, started 0 s ago) from an interrupted runner");
}

TEST(RunnerLock, ASecondRunnerIsRefusedNamingTheFirstsPid) {
  const auto db = std::filesystem::temp_directory_path() / ("runner-lock-test-" + std::to_string(::getpid()) + ".db");
  {
    const RunnerLock first(db.string());
    try {
      const RunnerLock second(db.string());
      ADD_FAILURE() << "two runners held the lock";
    } catch (const CampaignError& e) {
      EXPECT_THAT(e.what(), HasSubstr("another `harness run` (pid " + std::to_string(::getpid()) + ")"));
      EXPECT_THAT(e.what(), HasSubstr(db.string()));
    }
  }
  std::optional<RunnerLock> after;
  EXPECT_NO_THROW(after.emplace(db.string())) << "the lock outlived its runner";
  after.reset();
  std::filesystem::remove(db.string() + ".runner.lock");
}

}  // namespace
