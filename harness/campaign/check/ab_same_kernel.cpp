// The same-kernel rule of an A/B campaign (ab_same_kernel.hpp).
#include "harness/campaign/check/ab_same_kernel.hpp"

#include "harness/vm/image.hpp"

#include <filesystem>

namespace harness::campaign {

namespace fs = std::filesystem;

VariantKernel variant_kernel(const Variant& v, const std::string& default_image_dir) {
  VariantKernel k;
  k.default_image = v.kernel_image_dir.empty();
  k.image_dir = fs::absolute(fs::path(k.default_image ? default_image_dir : v.kernel_image_dir)).lexically_normal().string();
  if (fs::exists(fs::path(k.image_dir) / "manifest.json")) k.vmlinuz_sha256 = harness::vm::load_image_dir(k.image_dir).vmlinuz_sha256;
  return k;
}

namespace {

/// Both sides' directory, resolved through symbolic links (a shared image linked twice is one).
bool same_directory(const std::string& a, const std::string& b) {
  std::error_code ea, eb;
  const auto ca = fs::weakly_canonical(a, ea), cb = fs::weakly_canonical(b, eb);
  return ea || eb ? a == b : ca == cb;
}

std::string describe(const VariantKernel& k) {
  return k.image_dir + (k.default_image ? " (the default image)" : "") +
         (k.vmlinuz_sha256.empty() ? " (not built yet)" : "");
}

}  // namespace

Checked check_variant_kernels(const Campaign& c, const std::string& default_image_dir) {
  if (c.design != "ab-pairs" || c.design_aa || c.variants.size() != 2) return {};
  const Variant& b = c.variants[0];
  const Variant& k = c.variants[1];
  if (b.cmdline != k.cmdline) return {};
  const VariantKernel kb = variant_kernel(b, default_image_dir), kc = variant_kernel(k, default_image_dir);
  const bool same_hash = !kb.vmlinuz_sha256.empty() && kb.vmlinuz_sha256 == kc.vmlinuz_sha256;
  if (!same_hash && !same_directory(kb.image_dir, kc.image_dir)) return {};
  const bool names_image = !kb.default_image || !kc.default_image;
  const bool same_knobs = b.sysctls == k.sysctls && b.sysfs == k.sysfs;
  if (!names_image && !same_knobs) return {};  // the same guest, different knobs: a knob comparison
  const std::string hash = kb.vmlinuz_sha256.empty() ? kc.vmlinuz_sha256 : kb.vmlinuz_sha256;
  std::string msg = c.file + ":" + std::to_string(k.line) + ": field variants.candidate: baseline and candidate boot the same kernel (vmlinuz sha256 " +
                    (hash.empty() ? std::string("unknown: the image is not built yet") : hash) +
                    ") with the same kernel command line" +
                    (same_knobs ? " and write the same knobs" : "") + ":\n  baseline image:  " + describe(kb) +
                    "\n  candidate image: " + describe(kc) + "\n";
  msg += names_image
             ? "A kernel comparison would measure one kernel against itself. Build each side's kernel into its own "
               "image (`harness vm image --kernel BZIMAGE --modules DIR --out DIR`, the merge base's and the change's: "
               "docs/CI.md) and point variants.<v>.kernel.image_dir at them"
             : "Nothing differs between the variants: this is an A/A run. Put what the candidate changes under "
               "variants.candidate";
  msg += ", or declare a deliberate A/A run with `design.aa: true` (docs/CAMPAIGN.md \"variants\").\n";
  return problem(std::move(msg));
}

}  // namespace harness::campaign
