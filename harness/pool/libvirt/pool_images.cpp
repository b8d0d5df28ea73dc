// The image a boot gets and its staging on a host, once per run and image, with this campaign's
// claim (libvirt_pool_impl.hpp; image_staging.hpp).
#include "harness/pool/libvirt/libvirt_pool_impl.hpp"

#include "harness/pool/host_costs.hpp"

namespace harness::pool::libvirt {

harness::vm::Image LibvirtPool::Impl::image(const std::string& dir) {
  if (!dir.empty()) return harness::vm::load_image_dir(dir);
  if (!hooks.default_image_dir.empty()) return harness::vm::load_image_dir(hooks.default_image_dir);
  return harness::vm::load_image(cfg.cache_dir);
}

StagedImage LibvirtPool::Impl::staged(HostState& h, const harness::vm::Image& img) {
  std::lock_guard<std::mutex> lock(h.mu);
  if (auto it = h.images.find(img.sha256); it != h.images.end()) return it->second;
  // The claim first: a `vm down --images` of another campaign running meanwhile keeps the image.
  if (!campaign.empty()) claim_image(h.pool.get(), img.sha256, campaign, db);
  const auto t0 = Clock::now();
  StagedImage s = stage_image(h.conn.get(), h.pool.get(), io(), img, cache);
  if (!s.uploaded.empty())
    record_upload("libvirt", host_identity(h.cfg.uri.text), std::chrono::duration<double>(Clock::now() - t0).count());
  {
    std::lock_guard<std::mutex> ul(uploads_mu);
    for (const auto& u : s.uploaded) uploads.push_back(u + " on " + h.cfg.uri.text);
  }
  if (!s.uploaded.empty())
    std::fprintf(out, "libvirt %s: uploaded image %s (%zu volumes)\n", h.cfg.uri.text.c_str(), img.sha256.substr(0, 16).c_str(),
                 s.uploaded.size());
  h.images[img.sha256] = s;
  return s;
}

}  // namespace harness::pool::libvirt
