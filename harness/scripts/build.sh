#!/usr/bin/env bash
# Configures and builds the project into ${BUILD_DIR:-build} (Release-with-debug-info).
# Usage: build.sh [TARGET...]   (no target: everything). BUILD_JOBS=N sets the parallel jobs
# (default: one per core).
# Uses ccache when it is installed (only a speed-up: the build is the same without it);
# CCACHE_BASEDIR makes objects reusable between clones of the repository.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
launcher=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" >/dev/null
targets=()
if (($# > 0)); then targets=(--target "$@"); fi
cmake --build "$build" -j"${BUILD_JOBS:-$(nproc)}" "${targets[@]}"
