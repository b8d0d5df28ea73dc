// Token file rules and constant-time comparison (harness/agent/token.hpp).
#include "harness/agent/token.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace harness::agent;

namespace {
std::string make_token_file(const std::string& content, mode_t mode) {
  std::string dir = fs::temp_directory_path() / ("tok-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string p = dir + "/token";
  { std::ofstream(p) << content; }
  chmod(p.c_str(), mode);
  return p;
}
}  // namespace

TEST(Token, Loads0600AndStripsNewline) {
  auto p = make_token_file("0123456789abcdef0123456789abcdef01\n", 0600);
  EXPECT_EQ(load_token(p), "0123456789abcdef0123456789abcdef01");
}

TEST(Token, RejectsGroupOrOtherAccess) {
  auto p = make_token_file("0123456789abcdef0123456789abcdef01\n", 0644);
  try {
    load_token(p);
    FAIL() << "mode 0644 accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("0600"), std::string::npos) << e.what();
  }
  auto q = make_token_file("0123456789abcdef0123456789abcdef01\n", 0640);
  EXPECT_THROW(load_token(q), std::runtime_error);
}

TEST(Token, RejectsEmptyShortAndMissing) {
  EXPECT_THROW(load_token(make_token_file("\n", 0600)), std::runtime_error);
  EXPECT_THROW(load_token(make_token_file("short", 0600)), std::runtime_error);
  EXPECT_THROW(load_token("/nonexistent/token"), std::runtime_error);
}

// The documented minimum (kMinTokenChars = 32): 31 characters are refused with an error
// naming the file, 32 are accepted; one character repeated is refused at any length.
TEST(Token, RejectsShorterThan32AndOneRepeatedCharacter) {
  const std::string p31 = make_token_file(std::string("0123456789abcdef0123456789abcde") + "\n", 0600);
  try {
    load_token(p31);
    FAIL() << "a 31-character token was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("token file " + p31), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("shorter than 32"), std::string::npos) << e.what();
  }
  EXPECT_EQ(load_token(make_token_file("0123456789abcdef0123456789abcdef\n", 0600)).size(), 32u);
  for (const std::string& same : {std::string(32, 'a'), std::string(64, '0')}) {
    const std::string p = make_token_file(same + "\n", 0600);
    try {
      load_token(p);
      FAIL() << "token '" << same << "' accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("token file " + p), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("one character repeated"), std::string::npos) << e.what();
    }
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
