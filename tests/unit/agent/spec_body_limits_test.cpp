// The limits of a submitted spec's JSON, judged on the raw body (harness/agent/cases/spec_body_limits.hpp):
// each limit at its edge, the refused value named as the spec's errors name a field.
#include "harness/agent/cases/spec_body_limits.hpp"
#include "tests/common/valid_spec.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace {
using harness::agent::kMaxSpecStringBytes;
using harness::agent::kMaxSpecValues;
using harness::agent::scan_spec_body;
using Verdict = harness::agent::SpecBodyScan::Verdict;
using nlohmann::json;

TEST(SpecBodyLimits, AValidSpecAndOneAtEachLimitPass) {
  EXPECT_TRUE(scan_spec_body(test_support::valid_spec("case-a").dump()).ok());
  EXPECT_TRUE(scan_spec_body(test_support::valid_spec("case-a").dump(2)).ok()) << "indented";
  json at_limit = test_support::valid_spec("case-b");
  at_limit["backend"]["swapfile_path"] = std::string(kMaxSpecStringBytes, 'p');
  at_limit["backend"][std::string(kMaxSpecStringBytes, 'k')] = 1;
  EXPECT_TRUE(scan_spec_body(at_limit.dump()).ok());
  // 1 (the object) + 1 (the array) + kMaxSpecValues - 2 numbers.
  const json many = {{"x", json(std::vector<int>(kMaxSpecValues - 2, 1))}};
  EXPECT_TRUE(scan_spec_body(many.dump()).ok());
  EXPECT_TRUE(scan_spec_body(R"({"a\"b": "c\\", "d": ["\"]", 1]})").ok()) << "escaped quotes";
}

TEST(SpecBodyLimits, ALongKeyOrStringIsNamedWithItsLength) {
  json key = test_support::valid_spec("case-k");
  key["backend"]["x" + std::string(kMaxSpecStringBytes, 'k')] = 1;
  auto s = scan_spec_body(key.dump());
  EXPECT_EQ(s.verdict, Verdict::StringTooLong);
  EXPECT_EQ(s.field, "backend.x" + std::string(63, 'k') + "... (4097 bytes)");
  EXPECT_NE(s.why.find("a key longer than 4096 bytes (limit)"), std::string::npos) << s.why;
  json conf = test_support::valid_spec("case-c");
  conf["configuration"] = std::string(kMaxSpecStringBytes + 1, 'c');
  s = scan_spec_body(conf.dump());
  EXPECT_EQ(s.verdict, Verdict::StringTooLong);
  EXPECT_EQ(s.field, "configuration");
  EXPECT_NE(s.why.find("a string longer than 4096 bytes (limit): '" + std::string(64, 'c') + "... (4097 bytes)'"),
            std::string::npos)
      << s.why;
  json arr = test_support::valid_spec("case-v");
  arr["variant"] = {{"name", "n"}, {"cmdline", {"a=1", "b=2", std::string(5000, 'z')}}};
  s = scan_spec_body(arr.dump());
  EXPECT_EQ(s.field, "variant.cmdline[2]");
  EXPECT_EQ(scan_spec_body("\"" + std::string(5000, 'z') + "\"").field, "") << "a top-level string";
}

TEST(SpecBodyLimits, TooManyValuesNamesTheFirstOneOver) {
  const json many = {{"x", json(std::vector<int>(kMaxSpecValues - 1, 1))}};
  const auto s = scan_spec_body(many.dump());
  EXPECT_EQ(s.verdict, Verdict::TooManyValues);
  EXPECT_EQ(s.field, "x[" + std::to_string(kMaxSpecValues - 2) + "]");
  EXPECT_NE(s.why.find("more than 10000 JSON values"), std::string::npos) << s.why;
}

// What the parser refuses better is left to it: deeper than its 64 levels, a string not
// closed.
TEST(SpecBodyLimits, DeepOrUnclosedJsonIsLeftToTheParser) {
  EXPECT_TRUE(scan_spec_body(std::string(100000, '[') + std::string(100000, ']')).ok());
  EXPECT_TRUE(scan_spec_body("{\"a\": \"" + std::string(10000, 'x')).ok());
}

}  // namespace
