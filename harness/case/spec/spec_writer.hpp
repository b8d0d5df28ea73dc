#pragma once
// The one writer of case specs (harness/case/SPEC.md): the inverse of parse_spec(). The
// campaign planner, `harness calibrate` and the vm tests all build a CaseSpec and write it
// here, so a spec field is spelled in one place on the writing side.
#include <nlohmann/json.hpp>

#include <string>

#include "harness/case/spec/spec.hpp"

namespace harness::case_ {

/// The SPEC.md document of `s`, every field written out: defaults that parse_spec() would
/// fill (trigger, telemetry offsets, SQLite offset, active-window slide, restoration
/// timeout) are written explicitly, absent optional cgroup limits as null; `triplet_id`,
/// `dose_bytes` and `variant` are left out when absent, `policy` unless policy_in_spec (variant.kernel_release and
/// kernel_image_dir are null when absent). `s.raw` is ignored. For any spec this writes,
/// spec_json(parse_spec(spec_json(s).dump(), ...)) == spec_json(s). Does not validate:
/// parse_spec() does.
nlohmann::json spec_json(const CaseSpec& s);

/// A case of one local guest (harness vm image) with the values the local guests and the
/// smoke campaign (campaigns/smoke.yaml) share: vm "vm0", 1 vCPU / 1024 MiB, cgroup parent
/// "harness", lzo-rle zram at priority 100, the image's swapfile /var/lib/harness/swapfile
/// at priority 10, 100 ms canaries with a 16 MiB hot region, the image's SQLite DB
/// /var/lib/harness/canary.db with 8 queries per request, workload seeds 1, repeat 1, pinned
/// commit "any". Phases, cgroup limits, zram size and the pressure episode are left 0 for
/// the caller (`harness calibrate`, the vm tests) to set. `study_arm`: static-zram,
/// delayed-activation or bounded-reclaim (its policy; the caller sets dose_bytes and
/// policy_params["dose_mib"] for bounded-reclaim).
CaseSpec local_guest_case(const std::string& case_id, const std::string& campaign, const std::string& study_arm);

}  // namespace harness::case_
