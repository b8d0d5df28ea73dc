// SHA-256 via OpenSSL's EVP interface (see sha256.hpp).
#include "harness/digest/sha256.hpp"

#include <openssl/evp.h>

#include <fstream>
#include <stdexcept>
#include <vector>

namespace harness::digest {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_ || EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("sha256: EVP init failed");
}

Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256::update(std::string_view data) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data.data(), data.size());
}

void Sha256::update_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("sha256: cannot read " + path);
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() > 0) update(std::string_view(buf.data(), static_cast<std::size_t>(in.gcount())));
  }
  if (in.bad()) throw std::runtime_error("sha256: read error on " + path);
}

std::string Sha256::hex() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), md, &len);
  static const char* d = "0123456789abcdef";
  std::string r;
  for (unsigned i = 0; i < len; ++i) {
    r += d[md[i] >> 4];
    r += d[md[i] & 15];
  }
  return r;
}

std::string sha256_file(const std::string& path) {
  Sha256 h;
  h.update_file(path);
  return h.hex();
}

std::string sha256_hex(std::string_view data) {
  Sha256 h;
  h.update(data);
  return h.hex();
}

}  // namespace harness::digest
