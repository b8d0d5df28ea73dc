// The progress display's ETA (harness/campaign/runner/progress.hpp), in plain (non-terminal) mode: a
// case taken over from an interrupted runner counts as done but never as throughput, so a resumed
// campaign does not promise "ETA 0 min 00 s" after judging such a case at once.
#include "harness/campaign/runner/progress.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace {

using ::testing::HasSubstr;
using ::testing::Not;

/// Everything `run` printed through a Progress writing to a temporary file.
template <typename F>
std::string printed(F run) {
  std::FILE* f = std::tmpfile();
  {
    harness::campaign::Progress p(10, 4, /*tty=*/false, f);
    run(p);
  }
  std::rewind(f);
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, f)) out += buf;
  std::fclose(f);
  return out;
}

TEST(ProgressEta, ATakenOverCaseIsDoneButGivesNoThroughput) {
  const auto out = printed([](auto& p) {
    p.start("vm0", "c4", 1, /*taken_over=*/true);
    p.finish("vm0", "c4", "lost", "taken over after the runner was interrupted");
  });
  EXPECT_THAT(out, HasSubstr("[5/10 done, ETA unknown]"));
  EXPECT_THAT(out, Not(HasSubstr("ETA 0 min")));
}

TEST(ProgressEta, ACaseThisRunStartedGivesTheThroughput) {
  const auto out = printed([](auto& p) {
    p.start("vm0", "c4", 1, /*taken_over=*/true);
    p.finish("vm0", "c4", "completed", "");
    p.start("vm0", "c5", 1);
    p.finish("vm0", "c5", "completed", "");
  });
  EXPECT_THAT(out, HasSubstr("[5/10 done, ETA unknown]"));
  EXPECT_THAT(out, HasSubstr("[6/10 done, ETA "));
  EXPECT_THAT(out, Not(HasSubstr("[6/10 done, ETA unknown]")));
}

TEST(ProgressEta, AnInfraFailureIsNotDone) {
  const auto out = printed([](auto& p) {
    p.start("vm0", "c4", 1);
    p.finish("vm0", "c4", "infra_failed", "boot", /*gave_up=*/false);
  });
  EXPECT_THAT(out, HasSubstr("[4/10 done, ETA unknown]"));
}

}  // namespace
