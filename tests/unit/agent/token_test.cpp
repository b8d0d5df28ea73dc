// Token file rules and constant-time comparison (harness/agent/token.hpp).
#include "harness/agent/token.hpp"
#include "tests/unit/agent/test_token.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

using namespace harness::agent;

namespace {

/// Token files in a directory of the test's own (removed after it).
class TokenFile : public ::testing::Test {
 protected:
  test_support::TempDir tmp{"tok"};

  std::string make_token_file(const std::string& content, mode_t mode) {
    return agent_test::write_token_file(tmp.path(), content, mode, "token-" + std::to_string(++n_));
  }

  /// Why load_token refuses `path` (its std::runtime_error), or "accepted".
  static std::string refusal(const std::string& path) {
    try {
      load_token(path);
      return "accepted";
    } catch (const std::runtime_error& e) {
      return e.what();
    }
  }

 private:
  int n_ = 0;
};

TEST_F(TokenFile, Loads0600AndStripsNewline) {
  auto p = make_token_file("0123456789abcdef0123456789abcdef01\n", 0600);
  EXPECT_EQ(load_token(p), "0123456789abcdef0123456789abcdef01");
}

TEST_F(TokenFile, RejectsGroupOrOtherAccess) {
  const auto p = make_token_file("0123456789abcdef0123456789abcdef01\n", 0644);
  EXPECT_NE(refusal(p).find("0600"), std::string::npos) << refusal(p);
  EXPECT_THROW(load_token(make_token_file("0123456789abcdef0123456789abcdef01\n", 0640)), std::runtime_error);
}

TEST_F(TokenFile, RejectsEmptyShortAndMissing) {
  EXPECT_THROW(load_token(make_token_file("\n", 0600)), std::runtime_error);
  EXPECT_THROW(load_token(make_token_file("short", 0600)), std::runtime_error);
  EXPECT_THROW(load_token("/nonexistent/token"), std::runtime_error);
}

// The documented minimum (kMinTokenChars = 32): 31 characters are refused with an error
// naming the file, 32 are accepted; one character repeated is refused at any length.
TEST_F(TokenFile, RejectsShorterThan32AndOneRepeatedCharacter) {
  const std::string p31 = make_token_file(std::string("0123456789abcdef0123456789abcde") + "\n", 0600);
  EXPECT_NE(refusal(p31).find("token file " + p31), std::string::npos) << refusal(p31);
  EXPECT_NE(refusal(p31).find("shorter than 32"), std::string::npos) << refusal(p31);
  EXPECT_EQ(load_token(make_token_file("0123456789abcdef0123456789abcdef\n", 0600)).size(), 32u);
  for (const std::string& same : {std::string(32, 'a'), std::string(64, '0')}) {
    const std::string p = make_token_file(same + "\n", 0600);
    EXPECT_NE(refusal(p).find("token file " + p), std::string::npos) << same << ": " << refusal(p);
    EXPECT_NE(refusal(p).find("one character repeated"), std::string::npos) << same << ": " << refusal(p);
  }
  EXPECT_NO_THROW(load_token(make_token_file(random_token() + "\n", 0600)));
}

TEST(Token, EqualityAndBearerParsing) {
  EXPECT_TRUE(token_equal("abcdefabcdefabcdef", "abcdefabcdefabcdef"));
  EXPECT_FALSE(token_equal("abcdefabcdefabcdef", "abcdefabcdefabcdeX"));
  EXPECT_FALSE(token_equal("abcdefabcdefabcdef", "abcdefabcdefabcde"));
  EXPECT_FALSE(token_equal("abcdefabcdefabcdef", ""));
  EXPECT_TRUE(bearer_ok("Bearer abcdefabcdefabcdef", "abcdefabcdefabcdef"));
  EXPECT_FALSE(bearer_ok("bearer abcdefabcdefabcdef", "abcdefabcdefabcdef"));
  EXPECT_FALSE(bearer_ok("abcdefabcdefabcdef", "abcdefabcdefabcdef"));
  EXPECT_FALSE(bearer_ok("Bearer ", "abcdefabcdefabcdef"));
  EXPECT_FALSE(bearer_ok("", "abcdefabcdefabcdef"));
}

TEST(Token, RandomTokensDiffer) {
  auto a = random_token(), b = random_token();
  EXPECT_EQ(a.size(), 64u);
  EXPECT_NE(a, b);
}

}  // namespace
