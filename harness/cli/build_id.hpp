#pragma once
// This executable's build as results::BuildId (version, source commit, dirty flag from the
// configure step, harness/build_info.hpp), for provenance headers (results/provenance.hpp).
#include "results/provenance.hpp"

#include <harness/build_info.hpp>

namespace harness::cli {

inline results::BuildId current_build() {
  return {harness::build::kVersion, harness::build::kSourceCommit, harness::build::kSourceDirty};
}

}  // namespace harness::cli
