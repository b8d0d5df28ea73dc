// Qualification options of a case (qualification_options.hpp).
#include "harness/case/spec/qualification_options.hpp"

namespace harness::case_ {

qualify::Options case_qualification_options(const CaseSpec& spec, const std::string& root, const std::string& out_dir,
                                            std::uint64_t min_free_disk_bytes) {
  qualify::Options q;
  q.root = root;
  q.swapfile_path = spec.backend.swapfile_path;
  q.zram_algorithm = spec.backend.zram_algorithm;  // the campaign's compressor must be available
  q.case_min_swap_priority = spec.backend.swapfile_priority;  // foreign active swap must sit below
  q.vcpus = static_cast<unsigned>(spec.vm_vcpus);
  q.memory_mib = static_cast<std::uint64_t>(spec.vm_memory_mib);
  q.pinned_commit = spec.pinned_commit;
  q.disk_path = out_dir;
  q.min_free_disk_bytes = min_free_disk_bytes;
  return q;
}

}  // namespace harness::case_
