// Token file loading and constant-time comparison (see token.hpp).
#include "harness/agent/token.hpp"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace harness::agent {

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
  if (t.size() < kMinTokenChars)
    throw std::runtime_error("token file " + path + ": token of " + std::to_string(t.size()) +
                             " characters, shorter than " + std::to_string(kMinTokenChars) +
                             " (make one with: head -c 32 /dev/urandom | base64)");
  if (t.find_first_not_of(t.front()) == std::string::npos)
    throw std::runtime_error("token file " + path + ": token is one character repeated (not a secret; make one with: "
                             "head -c 32 /dev/urandom | base64)");
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
