#pragma once
// The same-kernel rule of an A/B campaign (design ab-pairs; ours, docs/CAMPAIGN.md "variants"):
// refused at `harness plan`, `harness run FILE` and `harness check` before anything is stored
// or booted, unless the campaign declares itself an A/A run (`design.aa: true`).
//
// Each variant boots the kernel of its image: variants.<v>.kernel.image_dir, else the default
// image (<cache>/image, what `baseline: {}` boots). Two images boot the same kernel when they
// are the same directory, or when their manifests record the same kernel content hash
// (manifest.json artifacts_sha256.vmlinuz, written by `harness vm image`). With the same
// kernel and the same kernel command line (variants.<v>.cmdline) a campaign is refused when
//   - either variant names a kernel.image_dir: it asks for a kernel comparison, and would
//     measure a kernel against itself (e.g. both images built from one git ref), or
//   - the variants also write the same knobs (sysctls, sysfs): nothing differs, an A/A run.
// A variant whose image is not built yet (no manifest.json) has no hash: it is the same
// kernel as the other side only when both are that one directory.
#include "harness/campaign/model/campaign.hpp"

#include <string>

#include "harness/error/expected.hpp"

namespace harness::campaign {

/// The kernel one variant boots, as far as plan time knows it.
struct VariantKernel {
  std::string image_dir;       ///< the image directory (absolute, lexically normal)
  bool default_image = false;  ///< no kernel.image_dir: the default image
  std::string vmlinuz_sha256;  ///< manifest artifacts_sha256.vmlinuz; "" = no manifest (not built)
};

/// The kernel variant `v` boots; `default_image_dir` is <cache>/image. Throws
/// std::runtime_error naming the file when a manifest.json exists but cannot be read.
VariantKernel variant_kernel(const Variant& v, const std::string& default_image_dir);

/// The rules above: passed when `c` is not ab-pairs, declares design.aa, or its variants
/// differ; else the Problem, naming both image directories and the kernel hash and the way
/// out (an image per kernel, or design.aa: true). `default_image_dir` is <cache>/image.
/// Throws as variant_kernel.
Checked check_variant_kernels(const Campaign& c, const std::string& default_image_dir);

}  // namespace harness::campaign
