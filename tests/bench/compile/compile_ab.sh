#!/usr/bin/env bash
# Compile CPU of two commits side by side: the whole tree of BASE (default origin/main, else
# HEAD~1) and of this work tree, each configured fresh like harness/scripts/build.sh does
# (RelWithDebInfo, no ccache) and built with every core, one after the other, with
# cpu_launcher.sh recording each compile. Prints CPU-seconds of compiling (user + sys) for
# product and test objects and the ratio this/BASE, then the wall time of each build.
# Run it on an otherwise idle machine: CPU time per compile grows when other work shares the
# cores, so only builds measured under the same load compare.
# Usage: [TARGET=T] [JOBS=N] [SIDES=base|this] tests/bench/compile/compile_ab.sh [BASE]
# (the whole tree: about 2 x 10-16 min on 2 cores; TARGET=harness, the product in every commit,
# about 2 x 3 min). JOBS sets the parallel compiles (default: one per core; JOBS=1 on a machine
# shared with other work). SIDES=base or SIDES=this builds one side only and keeps its summary
# in OUT, so the two sides can be built at different times (say, base while this tree is being
# edited); the comparison is printed once both summaries are in OUT. OBJECTS=REGEX compiles
# only the objects in the build folders REGEX matches (compile_objects.py: OBJECTS=^tests/ is
# every test and bench object), without building the libraries they link; instead of TARGET.
# Leaves nothing behind but its logs in ${OUT:-/tmp/compile-ab}.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
base=${1:-$(git -C "$root" rev-parse --verify -q origin/main || git -C "$root" rev-parse HEAD~1)}
out=${OUT:-/tmp/compile-ab}
launcher=$root/tests/bench/compile/cpu_launcher.sh
mkdir -p "$out"
sides=${SIDES:-base this}
case $sides in base | this | "base this") ;; *) echo "compile_ab: SIDES must be base or this, not '$sides'" >&2; exit 2 ;; esac
wt=$(mktemp -d --suffix=.compile-ab-base)
trap 'git -C "$root" worktree remove --force "$wt" >/dev/null 2>&1 || rm -rf "$wt"; rm -rf "$out/build-base" "$out/build-this"' EXIT
if [[ $sides == *base* ]]; then git -C "$root" worktree add --detach "$wt" "$base" >/dev/null; fi
measure() {  # measure NAME SOURCE_DIR
  local name=$1 src=$2 build=$out/build-$1 log=$out/cpu-$1.log t0
  rm -rf "$build" "$log"
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" \
    -DCMAKE_C_COMPILER_LAUNCHER="$launcher" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
  t0=$SECONDS
  if [[ -n ${OBJECTS:-} ]]; then
    BUILD_CPU_LOG=$log /usr/bin/python3 "$root/tests/bench/compile/compile_objects.py" "$build" "$OBJECTS" "$launcher" \
      "${JOBS:-$(nproc)}" >"$out/build-$name.out" 2>&1
  else
    BUILD_CPU_LOG=$log cmake --build "$build" -j"${JOBS:-$(nproc)}" ${TARGET:+--target "$TARGET"} >"$out/build-$name.out" 2>&1
  fi
  echo "$((SECONDS - t0)) -j${JOBS:-$(nproc)}" >"$out/wall-$name.txt"
  /usr/bin/python3 "$root/tests/bench/compile/compile_cpu.py" "$build" "$log" >"$out/summary-$name.txt"
}
echo "compile_ab: ${OBJECTS:+objects in }${OBJECTS:-target ${TARGET:-all}}; building $sides; base $(git -C "$root" rev-parse --short "$base"), this tree $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet || echo ' (modified)'); load $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$out/header-${sides// /-}.txt"
if [[ $sides == *base* ]]; then measure base "$wt"; fi
if [[ $sides == *this* ]]; then measure this "$root"; fi
if [[ ! -f $out/summary-base.txt || ! -f $out/summary-this.txt ]]; then
  echo "compile_ab: $sides measured into $out; the comparison needs both sides there"
  exit 0
fi
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
wall = {n: open(f"{out}/wall-{n}.txt").read().split() for n in ("base", "this")}
print(f"{'build wall s':14} {wall['base'][0]:>8} {wall['this'][0]:>8}   (base {wall['base'][1]}, this {wall['this'][1]})")
PY
