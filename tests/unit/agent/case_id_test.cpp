// Case-id rule of API.md: [A-Za-z0-9._-]{1,128}, not "." or "..".
#include "harness/agent/cases/case_id.hpp"

#include <gtest/gtest.h>

using harness::agent::safe_case_id;

TEST(CaseId, AcceptsSpecExamples) {
  EXPECT_TRUE(safe_case_id("smoke-vm0-fast-structured-r1-bounded-reclaim"));
  EXPECT_TRUE(safe_case_id("a.b_c-1"));
  EXPECT_TRUE(safe_case_id(std::string(128, 'x')));
  EXPECT_TRUE(safe_case_id("..."));  // not a path component with meaning
}

TEST(CaseId, RejectsPathTricks) {
  for (const char* bad : {"", ".", "..", "../x", "a/b", "/etc", "a\\b", "a b", "a%2fb", "a\nb", "a:b"})
    EXPECT_FALSE(safe_case_id(bad)) << bad;
  EXPECT_FALSE(safe_case_id(std::string("a\0b", 3)));
  EXPECT_FALSE(safe_case_id(std::string(129, 'x')));
}
