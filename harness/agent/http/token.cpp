// Token file loading and constant-time comparison (see token.hpp).
#include "harness/agent/http/token.hpp"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace harness::agent {

namespace {

/// True for the characters of RFC 6750's b64token before its "=" padding.
bool b64token_char(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~' || c == '+' || c == '/';
}

/// The first character of `t` outside b64token ("=" only as trailing padding), as
/// "'c' at offset N", "a space at offset N" or "byte 0xNN at offset N"; empty when none.
std::string first_bad_character(std::string_view t) {
  std::size_t end = t.size();
  while (end > 0 && t[end - 1] == '=') --end;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const auto c = static_cast<unsigned char>(t[i]);
    if (i < end ? b64token_char(c) : c == '=') continue;
    char what[32];
    if (c == ' ')
      std::snprintf(what, sizeof what, "a space");
    else if (c > 0x20 && c < 0x7f)
      std::snprintf(what, sizeof what, "'%c'", c);
    else
      std::snprintf(what, sizeof what, "byte 0x%02x", c);
    return std::string(what) + " at offset " + std::to_string(i);
  }
  return "";
}

/// The shortest period p <= size/2 of `t` (t[i] == t[i + p] for every i), 0 when none.
std::size_t short_period(std::string_view t) {
  for (std::size_t p = 1; p <= t.size() / 2; ++p) {
    std::size_t i = 0;
    while (i + p < t.size() && t[i] == t[i + p]) ++i;
    if (i + p == t.size()) return p;
  }
  return 0;
}

TokenVerdict refused(TokenVerdict::Problem p, const std::string& what) {
  return {p, what + " (make one with: " + kMakeTokenCommand + ")"};
}

}  // namespace

TokenVerdict judge_token(std::string_view t) {
  using P = TokenVerdict::Problem;
  if (const std::string bad = first_bad_character(t); !bad.empty())
    return refused(P::BadCharacter, "token holds " + bad +
                                        "; a bearer token is made of A-Z a-z 0-9 - . _ ~ + / with = only as padding "
                                        "at its end (RFC 6750), nothing else: no whitespace, no '%'");
  if (t.size() < kMinTokenChars)
    return refused(P::TooShort, "token of " + std::to_string(t.size()) + " characters, shorter than " +
                                    std::to_string(kMinTokenChars));
  bool seen[256] = {};
  std::size_t distinct = 0;
  for (unsigned char c : t) distinct += seen[c] ? 0 : (seen[c] = true, 1);
  if (distinct < kMinTokenDistinct)
    return refused(P::FewDistinct, "token has only " + std::to_string(distinct) + " different character" +
                                       (distinct == 1 ? "" : "s") + " (at least " + std::to_string(kMinTokenDistinct) +
                                       "): not a secret");
  if (const std::size_t p = short_period(t))
    return refused(P::Repeated, "token is a string of " + std::to_string(p) + " characters repeated: not a secret");
  return {};
}

std::string load_token(const std::string& path) {
  struct stat st{};
  if (stat(path.c_str(), &st) != 0) throw std::runtime_error("token file " + path + ": does not exist");
  if (!S_ISREG(st.st_mode)) throw std::runtime_error("token file " + path + ": not a regular file");
  if (st.st_mode & 077) {
    char m[8];
    std::snprintf(m, sizeof m, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw std::runtime_error("token file " + path + ": mode " + m +
                             " lets group/others access it; must be 0600 (chmod 600 " + path + ")");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("token file " + path + ": cannot read");
  std::string t((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ' || t.back() == '\t'))
    t.pop_back();
  if (t.empty()) throw std::runtime_error("token file " + path + ": empty");
  if (const TokenVerdict v = judge_token(t); !v.ok()) throw std::runtime_error("token file " + path + ": " + v.why);
  return t;
}

bool token_equal(std::string_view expected, std::string_view given) {
  unsigned char a[SHA256_DIGEST_LENGTH], b[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(expected.data()), expected.size(), a);
  SHA256(reinterpret_cast<const unsigned char*>(given.data()), given.size(), b);
  return CRYPTO_memcmp(a, b, sizeof a) == 0;
}

bool bearer_ok(std::string_view authorization, std::string_view token) {
  constexpr std::string_view prefix = "Bearer ";
  if (authorization.size() <= prefix.size() || authorization.substr(0, prefix.size()) != prefix)
    return false;
  return token_equal(token, authorization.substr(prefix.size()));
}

std::string random_token() {
  unsigned char buf[32];
  if (RAND_bytes(buf, sizeof buf) != 1) throw std::runtime_error("random_token: RAND_bytes failed");
  static const char* d = "0123456789abcdef";
  std::string r;
  for (unsigned char c : buf) {
    r += d[c >> 4];
    r += d[c & 15];
  }
  return r;
}

}  // namespace harness::agent
