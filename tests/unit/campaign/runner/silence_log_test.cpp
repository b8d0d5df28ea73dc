// The silence bookkeeping (harness/campaign/runner/silence_log.hpp): the episodes, liveness
// answers and boot ids it leaves in an attempt's detail_json (docs/PROTOCOL.md "A silent agent").
#include "harness/campaign/runner/silence_log.hpp"

#include <gtest/gtest.h>

namespace {

using harness::campaign::SilenceLog;
using std::chrono::milliseconds;

TEST(SilenceLog, AnEpisodeOpensAndClosesWithItsEvidence) {
  nlohmann::json d = nlohmann::json::object();
  SilenceLog s;
  EXPECT_FALSE(s.open());
  const auto t0 = SilenceLog::Clock::now();
  EXPECT_EQ(s.silent_for(t0 + milliseconds(500)), milliseconds(0));
  s.open_episode(d, "pressure", "timed out", t0, 5'000'000'000LL, 9'000'000'000LL);
  EXPECT_TRUE(s.open());
  EXPECT_EQ(s.silent_for(t0 + milliseconds(1500)), milliseconds(1500));
  ASSERT_EQ(d["silence"]["episodes"].size(), 1u);
  const auto& e = d["silence"]["episodes"][0];
  EXPECT_EQ(e["start_unix_ns"], 5'000'000'000LL);
  EXPECT_TRUE(e["end_unix_ns"].is_null());
  EXPECT_EQ(e["phase"], "pressure");
  EXPECT_EQ(e["first_error"], "timed out");
  EXPECT_EQ(d["silence"]["deadline_unix_ns"], 9'000'000'000LL);
  // Each change of the engine's answer, once.
  EXPECT_TRUE(s.note_liveness(d, "running", 6'000'000'000LL));
  EXPECT_FALSE(s.note_liveness(d, "running", 6'500'000'000LL));
  EXPECT_TRUE(s.note_liveness(d, "unknown", 7'000'000'000LL));
  EXPECT_EQ(d["silence"]["episodes"][0]["liveness"].size(), 2u);
  EXPECT_EQ(s.close_episode(d, 7'250'000'000LL), 2250);
  EXPECT_FALSE(s.open());
  EXPECT_EQ(d["silence"]["episodes"][0]["end_unix_ns"], 7'250'000'000LL);
  EXPECT_DOUBLE_EQ(d["silence"]["episodes"][0]["seconds"].get<double>(), 2.25);
  // A second episode before any phase: phase null, the liveness of the last one forgotten.
  s.open_episode(d, "", "reset", t0, 8'000'000'000LL, 9'000'000'000LL);
  EXPECT_TRUE(d["silence"]["episodes"][1]["phase"].is_null());
  EXPECT_TRUE(s.note_liveness(d, "unknown", 8'100'000'000LL));
}

TEST(SilenceLog, BootIdsAreKeptOnceEach) {
  nlohmann::json d = nlohmann::json::object();
  SilenceLog::note_boot_id(d, "");
  EXPECT_FALSE(d.contains("silence"));
  SilenceLog::note_boot_id(d, "boot-1");
  SilenceLog::note_boot_id(d, "boot-1");
  SilenceLog::note_boot_id(d, "boot-2");
  EXPECT_EQ(d["silence"]["boot_ids_seen"], nlohmann::json::array({"boot-1", "boot-2"}));
}

TEST(SilenceLog, AHeldRequestIsSilentOnlyFromWhenItsAnswerWasDue) {
  const auto asked = SilenceLog::Clock::now();
  // Failed after 12 s while the agent could hold it 10 s: silent from 10 s on.
  EXPECT_EQ(SilenceLog::start_offset(asked, asked + milliseconds(12000), milliseconds(10000)), milliseconds(10000));
  // Failed after 2 s (a refused connection): silent from then on.
  EXPECT_EQ(SilenceLog::start_offset(asked, asked + milliseconds(2000), milliseconds(10000)), milliseconds(2000));
  // A plain request: silent from when it was sent.
  EXPECT_EQ(SilenceLog::start_offset(asked, asked + milliseconds(3000), milliseconds(0)), milliseconds(0));
}

}  // namespace
