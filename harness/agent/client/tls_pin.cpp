// SPKI SHA-256 pin of a PEM certificate (tls_pin.hpp), with OpenSSL.
#include "harness/agent/client/tls_pin.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <vector>

namespace harness::agent {

std::string spki_pin_sha256(const std::string& cert_pem_file) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(cert_pem_file.c_str(), "r"), std::fclose);
  if (!f) throw std::runtime_error(cert_pem_file + ": cannot read certificate");
  std::unique_ptr<X509, void (*)(X509*)> cert(PEM_read_X509(f.get(), nullptr, nullptr, nullptr), X509_free);
  if (!cert) throw std::runtime_error(cert_pem_file + ": no PEM certificate in it");
  const int len = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(cert.get()), nullptr);
  if (len <= 0) throw std::runtime_error(cert_pem_file + ": cannot encode the public key");
  std::vector<unsigned char> der(static_cast<std::size_t>(len));
  unsigned char* p = der.data();
  i2d_X509_PUBKEY(X509_get_X509_PUBKEY(cert.get()), &p);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(der.data(), der.size(), digest);
  unsigned char b64[4 * ((SHA256_DIGEST_LENGTH + 2) / 3) + 1];
  EVP_EncodeBlock(b64, digest, SHA256_DIGEST_LENGTH);
  return "sha256//" + std::string(reinterpret_cast<const char*>(b64));
}

}  // namespace harness::agent
