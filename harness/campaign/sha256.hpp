#pragma once
// SHA-256 of a byte string, lowercase hex (64 characters). OpenSSL EVP underneath.
#include <string>
#include <string_view>

namespace harness::campaign {

/// Lowercase hex SHA-256 (FIPS 180-4) of `data`. Throws std::runtime_error if OpenSSL fails.
std::string sha256_hex(std::string_view data);

}  // namespace harness::campaign
