#!/usr/bin/env bash
# Builds the Debian package a VM needs: reclaim-harness_<version>_amd64.deb (CPack, DEB
# generator) into ${OUT:-<build>/package}, and prints its path. Builds first when needed.
# What is in it and how to use it: harness/packaging/README.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
out=${OUT:-$build/package}
"$root/harness/scripts/build.sh" >/dev/null
mkdir -p "$out"
cpack --config "$build/CPackConfig.cmake" -B "$out" >"$out/cpack.log" 2>&1 || { cat "$out/cpack.log" >&2; exit 2; }
deb=$(ls -t "$out"/reclaim-harness_*_amd64.deb | head -1)
echo "$deb"
