#pragma once
// SHA-256 (OpenSSL EVP), lowercase hex: guest artifact hashes, the preregistered schedule hash,
// an arm's hash. libcrypto is loaded on first use (dlopen), so a program that links this and
// never hashes (the guest's case executor) does not map it; when it cannot be loaded, the first
// digest throws std::runtime_error naming it.
#include <string>
#include <string_view>

namespace harness::digest {

/// Incremental SHA-256 (OpenSSL EVP). hex() finalises and returns 64 lowercase hex digits.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::string_view data);
  /// Hashes a whole file's bytes. Throws std::runtime_error naming the file when unreadable.
  void update_file(const std::string& path);
  std::string hex();

 private:
  void* ctx_;
};

/// SHA-256 of a file's contents, hex. Throws std::runtime_error naming the file.
std::string sha256_file(const std::string& path);
/// SHA-256 (FIPS 180-4) of a byte string: 64 lowercase hex digits. Throws std::runtime_error if OpenSSL fails.
std::string sha256_hex(std::string_view data);

}  // namespace harness::digest
