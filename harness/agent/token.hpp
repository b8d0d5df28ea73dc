#pragma once
// Bearer-token handling of the agent (harness/agent/API.md): the token lives in a file
// that only its owner can read (mode 0600 or 0400) and is compared in constant time.
#include <cstddef>
#include <string>
#include <string_view>

namespace harness::agent {

/// The shortest token the agent accepts, characters (API.md; ours: every token the harness
/// makes is longer: random_token 64 hex, the guest images' base64 of 32 random bytes 44).
inline constexpr std::size_t kMinTokenChars = 32;

/// Reads the token from `path`. Trailing whitespace/newlines are stripped.
/// Throws std::runtime_error naming the file when it is missing, not a regular file,
/// readable or writable by group/others (mode & 077 != 0: "must be 0600"), empty,
/// shorter than kMinTokenChars, or one character repeated ("aaaa...").
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
