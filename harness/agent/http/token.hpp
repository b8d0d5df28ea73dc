#pragma once
// Bearer-token handling of the agent (harness/agent/API.md): the token lives in a file
// that only its owner can read (mode 0600 or 0400) and is compared in constant time.
#include <cstddef>
#include <string>
#include <string_view>

namespace harness::agent {

/// The token rule (ours; API.md "Authentication"): what a bearer token needs so that it is
/// not guessable by its shape and arrives byte for byte. Every token the harness makes
/// passes it: random_token (64 hex), the guest images' and the package's
/// `head -c 32 /dev/urandom | base64` (44 characters).
inline constexpr std::size_t kMinTokenChars = 32;     ///< characters, at least
/// Different characters, at least: refuses "abab..." and the like, while a random token of
/// 32 hex characters has fewer about once in 30 million draws (64 hex or 44 base64: never
/// in practice).
inline constexpr std::size_t kMinTokenDistinct = 8;

/// The command the refusals name to make a good token.
inline constexpr const char* kMakeTokenCommand = "head -c 32 /dev/urandom | base64";

/// A token judged by the rule: accepted, or which part of the rule it breaks and why.
struct TokenVerdict {
  enum class Problem {
    None,
    BadCharacter,  ///< a character outside RFC 6750's b64token (A-Z a-z 0-9 - . _ ~ + /, then = only at the end)
    TooShort,      ///< fewer than kMinTokenChars characters
    FewDistinct,   ///< fewer than kMinTokenDistinct different characters
    Repeated,      ///< a shorter string repeated (a period of at most half its length: "abcabcab")
  };
  Problem problem = Problem::None;
  std::string why;  ///< the rule broken, with the command that makes a good token; empty when accepted
  bool ok() const { return problem == Problem::None; }
};

/// Judges `token` (already stripped of its trailing newline) by the rule, in the order of
/// TokenVerdict::Problem.
TokenVerdict judge_token(std::string_view token);

/// Reads the token from `path`. Trailing whitespace/newlines are stripped.
/// Throws std::runtime_error naming the file when it is missing, not a regular file,
/// readable or writable by group/others (mode & 077 != 0: "must be 0600"), empty, or
/// refused by judge_token (its why).
std::string load_token(const std::string& path);

/// Constant-time equality: compares SHA-256 digests of both strings with CRYPTO_memcmp,
/// so the time depends on neither the position of the first difference nor the lengths
/// (beyond hashing, which is linear in the length of the attacker's input only).
bool token_equal(std::string_view expected, std::string_view given);

/// True when `authorization` is exactly "Bearer <token>" with token_equal(token, ...).
bool bearer_ok(std::string_view authorization, std::string_view token);

/// A fresh random token: 32 bytes from the OS CSPRNG, hex (64 characters).
std::string random_token();

}  // namespace harness::agent
