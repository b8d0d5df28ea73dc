// Token file rules and constant-time comparison (harness/agent/http/token.hpp).
#include "harness/agent/http/token.hpp"
#include "tests/unit/agent/test_token.hpp"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <stdexcept>
#include <utility>
#include <vector>

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
  auto p = make_token_file(std::string(agent_test::kToken) + "\n", 0600);
  EXPECT_EQ(load_token(p), agent_test::kToken);
}

TEST_F(TokenFile, RejectsGroupOrOtherAccess) {
  const auto p = make_token_file(std::string(agent_test::kToken) + "\n", 0644);
  EXPECT_NE(refusal(p).find("0600"), std::string::npos) << refusal(p);
  EXPECT_THROW(load_token(make_token_file(std::string(agent_test::kToken) + "\n", 0640)), std::runtime_error);
}

TEST_F(TokenFile, RejectsEmptyShortAndMissing) {
  EXPECT_THROW(load_token(make_token_file("\n", 0600)), std::runtime_error);
  EXPECT_THROW(load_token(make_token_file("short", 0600)), std::runtime_error);
  EXPECT_THROW(load_token("/nonexistent/token"), std::runtime_error);
}

// The rule (token.hpp judge_token), each part at its edge: 31 characters refused and 32
// accepted; a character outside b64token (space, '%', a control byte, '=' before the end)
// refused; 7 different characters refused and 8 accepted; a shorter string repeated
// (a period of at most half the length) refused. A file holding a refused token is refused
// naming the file, the rule and the command that makes a good token.
TEST_F(TokenFile, TheRuleRefusesTokensWithLittleEntropy) {
  using P = TokenVerdict::Problem;
  const std::string good32 = "Zq8-vN3_x7Lp0~Rk5+Wd2/Hs9.Mf4Tb6";
  ASSERT_EQ(good32.size(), 32u);
  std::string ab, seven;
  for (int i = 0; i < 16; ++i) ab += "ab";
  for (int i = 0; i < 32; ++i) seven += "0123456"[(i * 3 + i / 7) % 7];
  const std::vector<std::pair<std::string, P>> judged{
      {good32, P::None},
      {std::string(agent_test::kToken), P::None},
      {good32 + "==", P::None},
      {good32.substr(0, 31), P::TooShort},
      {std::string(31, ' ') + "x", P::BadCharacter},
      {good32.substr(0, 16) + " " + good32.substr(16), P::BadCharacter},
      {"%41" + good32, P::BadCharacter},
      {good32 + "\x01", P::BadCharacter},
      {good32.substr(0, 16) + "=" + good32.substr(16), P::BadCharacter},
      {std::string(40, 'a'), P::FewDistinct},
      {ab, P::FewDistinct},
      {seven, P::FewDistinct},
      {seven.substr(0, 31) + "7", P::None},
      {"0123456789abcdef0123456789abcdef", P::Repeated},
      {"0123456789abcdef0123456789abcdef01", P::Repeated},
      {good32.substr(0, 20) + good32.substr(0, 20), P::Repeated},
  };
  for (const auto& [token, want] : judged) {
    const TokenVerdict v = judge_token(token);
    EXPECT_EQ(v.problem, want) << "'" << token << "': " << v.why;
    EXPECT_EQ(v.ok(), want == P::None) << token;
    EXPECT_EQ(v.why.empty(), want == P::None) << token << ": " << v.why;
  }
  const std::string p = make_token_file(ab + "\n", 0600);
  EXPECT_NE(refusal(p).find("token file " + p + ": token has only 2 different characters"), std::string::npos)
      << refusal(p);
  EXPECT_NE(refusal(p).find(kMakeTokenCommand), std::string::npos) << refusal(p);
  EXPECT_THROW(load_token(make_token_file("\n", 0600)), std::runtime_error);
}

// What the harness makes passes the rule, every time: random_token (64 hex; the local and
// libvirt guests), the base64 of 32 random bytes (the guest images, prepare-vm, the
// documented command; 44 characters), 20,000 each, and the hex of 16 random bytes (32
// characters, the shortest a user is likely to make; fewer than 8 different characters
// about once in 30 million), 2,000.
TEST(Token, GeneratedTokensPassTheRule) {
  for (int i = 0; i < 20000; ++i) {
    const std::string hex = random_token();
    ASSERT_TRUE(judge_token(hex).ok()) << hex << ": " << judge_token(hex).why;
    unsigned char raw[32];
    ASSERT_EQ(RAND_bytes(raw, sizeof raw), 1);
    unsigned char b64[64];
    const int n = EVP_EncodeBlock(b64, raw, sizeof raw);
    const std::string text(reinterpret_cast<const char*>(b64), static_cast<std::size_t>(n));
    ASSERT_EQ(text.size(), 44u);
    ASSERT_TRUE(judge_token(text).ok()) << text << ": " << judge_token(text).why;
    const std::string hex32 = hex.substr(0, 32);
    if (i < 2000) ASSERT_TRUE(judge_token(hex32).ok()) << hex32 << ": " << judge_token(hex32).why;
  }
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
