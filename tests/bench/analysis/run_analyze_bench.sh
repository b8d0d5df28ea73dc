#!/usr/bin/env bash
# Times `harness analyze` of a synthetic 180-case campaign DB with 1.94 million canary records
# (write_synthetic_db): report.md/report.json and every <table>.csv, figures skipped; then the
# figures alone (the same command with figures, minus the run without). Peak RSS from
# /usr/bin/time -v. Prints timings; asserts nothing about time (not a ctest).
# Usage: run_analyze_bench.sh [BUILD_DIR] [--quick]     (BUILD_DIR default: <repo>/build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=${1:-$root/build}
quick=${2:-}
harness=$build/harness/cli/harness
writer=$build/tests/bench/analysis/write_synthetic_db
for b in "$harness" "$writer"; do [[ -x $b ]] || { echo "missing $b (cmake --build $build --target harness write_synthetic_db)" >&2; exit 2; }; done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db=$work/campaign180.db

t0=$(date +%s.%N)
records=$("$writer" "$db" $quick)
t1=$(date +%s.%N)
printf 'synthetic DB: 180 cases, %s canary records, %.0f MiB, written in %.1f s\n' \
  "$records" "$(( $(stat -c %s "$db") / 1048576 ))" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')"

measure() {  # measure LABEL ARGS...: best of 3 wall times, max RSS of those runs
  local label=$1; shift
  local best=999999 rss=0
  for _ in 1 2 3; do
    rm -rf "$work/out"
    /usr/bin/time -v -o "$work/time.txt" "$harness" analyze "$db" --out "$work/out" "$@" > /dev/null 2> "$work/err.txt" \
      || { cat "$work/err.txt" >&2; exit 1; }
    local wall r
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' "$work/time.txt")
    r=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt")
    best=$(awk -v a="$wall" -v b="$best" 'BEGIN {print (a < b ? a : b)}')
    (( r > rss )) && rss=$r
  done
  printf '  %-38s %6.2f s   peak RSS %6.1f MiB\n' "$label" "$best" "$(awk -v r="$rss" 'BEGIN {print r / 1024}')"
  echo "$best" > "$work/last"
}
echo "harness analyze (B = 10000, best of 3):"
measure "report.md + report.json + CSVs" --no-figures
ls "$work/out" | tr '\n' ' ' | sed 's/^/    wrote: /'; echo
no_fig=$(cat "$work/last")
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  measure "same + figures (matplotlib)"
  printf '  %-38s %6.2f s\n' "figures alone (difference)" "$(awk -v a="$(cat "$work/last")" -v b="$no_fig" 'BEGIN {print a - b}')"
else
  echo "  figures: python3-matplotlib not installed, not timed"
fi
