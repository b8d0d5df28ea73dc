#!/usr/bin/env bash
# Compile CPU of two commits side by side: the whole tree of BASE (default origin/main, else
# HEAD~1) and of this work tree, each configured fresh like harness/scripts/build.sh does
# (RelWithDebInfo, no ccache) and built with every core, one after the other, with
# cpu_launcher.sh recording each compile. Prints CPU-seconds of compiling (user + sys) for
# product and test objects and the ratio this/BASE, then the wall time of each build.
# Run it on an otherwise idle machine: CPU time per compile grows when other work shares the
# cores, so only builds measured under the same load compare.
# Usage: [TARGET=T] tests/bench/compile/compile_ab.sh [BASE]   (the whole tree: about 2 x 10-16 min
# on 2 cores; TARGET=harness, the product in every commit, about 2 x 3 min)
# Leaves nothing behind but its logs in ${OUT:-/tmp/compile-ab}.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
base=${1:-$(git -C "$root" rev-parse --verify -q origin/main || git -C "$root" rev-parse HEAD~1)}
out=${OUT:-/tmp/compile-ab}
launcher=$root/tests/bench/compile/cpu_launcher.sh
mkdir -p "$out"
wt=$(mktemp -d --suffix=.compile-ab-base)
trap 'git -C "$root" worktree remove --force "$wt" >/dev/null 2>&1 || rm -rf "$wt"; rm -rf "$out/build-base" "$out/build-this"' EXIT
git -C "$root" worktree add --detach "$wt" "$base" >/dev/null
measure() {  # measure NAME SOURCE_DIR
  local name=$1 src=$2 build=$out/build-$1 log=$out/cpu-$1.log t0
  rm -rf "$build" "$log"
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" \
    -DCMAKE_C_COMPILER_LAUNCHER="$launcher" >/dev/null
  t0=$SECONDS
  BUILD_CPU_LOG=$log cmake --build "$build" -j"$(nproc)" ${TARGET:+--target "$TARGET"} >"$out/build-$name.out" 2>&1
  echo "$name $((SECONDS - t0))" >>"$out/wall.txt"
  /usr/bin/python3 "$root/tests/bench/compile/compile_cpu.py" "$build" "$log" >"$out/summary-$name.txt"
}
rm -f "$out/wall.txt"
echo "compile_ab: target ${TARGET:-all}; base $(git -C "$root" rev-parse --short "$base"), this tree $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet || echo ' (modified)'); load $(cut -d' ' -f1-3 /proc/loadavg)"
measure base "$wt"
measure this "$root"
/usr/bin/python3 - "$out" <<'PY'
import re, sys
out = sys.argv[1]
def read(name):
    d = {}
    for line in open(f"{out}/summary-{name}.txt"):
        m = re.match(r"(\w+)\s+compile\s+([0-9.]+) CPU-s", line)
        if m:
            d[m.group(1)] = float(m.group(2))
    d["all"] = sum(d.values())
    return d
b, t = read("base"), read("this")
print(f"{'compile CPU-s':14} {'base':>8} {'this':>8} {'this/base':>10}")
for k in ("product", "tests", "all"):
    print(f"{k:14} {b.get(k, 0):8.0f} {t.get(k, 0):8.0f} {t.get(k, 0) / b[k] if b.get(k) else float('nan'):10.2f}")
wall = dict(line.split() for line in open(f"{out}/wall.txt"))
print(f"{'build wall s':14} {wall['base']:>8} {wall['this']:>8}")
PY
