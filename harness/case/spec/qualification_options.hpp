#pragma once
// The qualification a case needs (study: "qualification checked root access, the kernel
// and experiment configuration, a writable memory.reclaim interface, zram, a swapfile,
// available disk space, clean starting swap, and the source commit"), built from its
// spec in one place: the agent runs it when a case is submitted (a failure is a 412, no
// case started) and the executor runs it again at the case's start (a failure is
// infra_failed), so a host problem is found at submission whenever it already exists.
#include <cstdint>
#include <string>

#include "harness/case/spec/spec.hpp"
#include "qualify/qualify.hpp"
#include "qualify/thresholds.hpp"

namespace harness::case_ {

/// qualify::Options for `spec`: its swapfile, zram compressor and lowest swap priority
/// (foreign active swap must sit below it), VM shape and pinned commit; free space judged
/// at `out_dir` (the case's output directory, or the directory it will be created in:
/// qualify judges the nearest existing ancestor) with `min_free_disk_bytes`; host files
/// under `root` ("/" on a VM, a fixture tree in tests).
qualify::Options case_qualification_options(const CaseSpec& spec, const std::string& root, const std::string& out_dir,
                                            std::uint64_t min_free_disk_bytes = qualify::kMinFreeDiskMiB << 20);

}  // namespace harness::case_
