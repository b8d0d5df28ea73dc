// Qualification (qualify.hpp): the checks in their order (each in qualify/checks/), the verdict,
// and the small public helpers the checks share with the campaign (known compressors, the
// pinned-commit form).
#include "qualify/checks/context.hpp"
#include "qualify/qualify.hpp"

#include <cctype>

namespace qualify {

const std::vector<std::string>& known_compressors() {
  static const std::vector<std::string> v{"lzo", "lzo-rle", "lz4", "lz4hc", "zstd", "842", "deflate"};
  return v;
}

std::string compressor_config_item(const std::string& alg) {
  if (alg == "lzo" || alg == "lzo-rle") return "CONFIG_CRYPTO_LZO";  // crypto/lzo.c and lzo-rle.c
  if (alg == "lz4") return "CONFIG_CRYPTO_LZ4";
  if (alg == "lz4hc") return "CONFIG_CRYPTO_LZ4HC";
  if (alg == "zstd") return "CONFIG_CRYPTO_ZSTD";
  if (alg == "842") return "CONFIG_CRYPTO_842";
  if (alg == "deflate") return "CONFIG_CRYPTO_DEFLATE";
  return "";
}

bool valid_pinned_commit(const std::string& s) {
  if (s == "any") return true;
  if (s.size() != 40) return false;
  for (char ch : s)
    if (!std::isxdigit(static_cast<unsigned char>(ch))) return false;
  return true;
}

Report run(const Options& opt) {
  Report rep;
  rep.checks.reserve(16);
  checks::Ctx x{opt, harness::kernel::Fs(opt.root), rep, std::nullopt, false, std::nullopt};
  checks::check_root(x);
  checks::check_kernel(x);
  checks::check_psi(x);
  checks::check_cgroup2_memory(x);
  const bool memory_ok = rep.checks.back().passed && rep.checks[rep.checks.size() - 2].passed;  // both cgroup2 checks
  checks::check_memory_reclaim(x, memory_ok);
  checks::check_zram(x);
  checks::check_zram_algorithm(x);
  checks::record_compressors(x);
  checks::check_zswap(x);
  checks::check_swapfile(x);
  checks::check_disk(x);
  checks::check_clean_swap(x);
  checks::check_commit(x);
  checks::check_vm_shape(x);
  checks::record(x);
  rep.passed = true;
  for (const auto& c : rep.checks)
    if (c.required && !c.passed) rep.passed = false;
  return rep;
}

}  // namespace qualify
