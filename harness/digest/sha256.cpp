// SHA-256 via OpenSSL's EVP interface, libcrypto loaded on first use (see sha256.hpp).
#include "harness/digest/sha256.hpp"

#include <dlfcn.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>

#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace harness::digest {

namespace {

/// OpenSSL's EVP digest functions, from libcrypto loaded on first use (dlopen), not linked: the
/// results store hashes an arm only when it converts an old campaign DB, and linking libcrypto
/// into the guest's case executor for that would add about 1.6 MiB to its resident set (measured
/// here: /bin/sleep 0 with libcrypto.so.3 preloaded, 3.2 MiB maximum RSS against 1.6 MiB).
struct Evp {
  EVP_MD_CTX* (*ctx_new)();
  void (*ctx_free)(EVP_MD_CTX*);
  int (*init)(EVP_MD_CTX*, const EVP_MD*, ENGINE*);
  int (*update)(EVP_MD_CTX*, const void*, size_t);
  int (*final)(EVP_MD_CTX*, unsigned char*, unsigned int*);
  const EVP_MD* (*sha256)();
};

template <typename F>
void sym(void* lib, const char* name, F& out, const std::string& so) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  if (!out) throw std::runtime_error("sha256: " + so + " has no " + name);
}

Evp load() {
  // The soname of the OpenSSL major version the harness was built against (Debian 12: 3).
  const std::string so = "libcrypto.so." + std::to_string(OPENSSL_VERSION_MAJOR);
  void* lib = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) throw std::runtime_error("sha256: cannot load OpenSSL (" + so + "): " + dlerror());
  Evp e{};
  sym(lib, "EVP_MD_CTX_new", e.ctx_new, so);
  sym(lib, "EVP_MD_CTX_free", e.ctx_free, so);
  sym(lib, "EVP_DigestInit_ex", e.init, so);
  sym(lib, "EVP_DigestUpdate", e.update, so);
  sym(lib, "EVP_DigestFinal_ex", e.final, so);
  sym(lib, "EVP_sha256", e.sha256, so);
  return e;  // the library stays loaded for the process's life
}

const Evp& evp() {
  static const Evp e = load();
  return e;
}

}  // namespace

Sha256::Sha256() : ctx_(evp().ctx_new()) {
  if (!ctx_ || evp().init(static_cast<EVP_MD_CTX*>(ctx_), evp().sha256(), nullptr) != 1)
    throw std::runtime_error("sha256: EVP init failed");
}

Sha256::~Sha256() { evp().ctx_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256::update(std::string_view data) { evp().update(static_cast<EVP_MD_CTX*>(ctx_), data.data(), data.size()); }

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
  evp().final(static_cast<EVP_MD_CTX*>(ctx_), md, &len);
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
