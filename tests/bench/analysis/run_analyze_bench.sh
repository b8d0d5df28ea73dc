#!/usr/bin/env bash
# Times `harness analyze` of a synthetic campaign DB (write_synthetic_db): 180 cases with 1.94
# million canary records, or --scale K times the triplets (K = 10: 1,800 cases, 19.4 million
# records). report.md/report.json and every <table>.csv with figures skipped; then, at scale 1,
# the same with figures and the figures alone (the difference). Peak RSS from /usr/bin/time -v.
# Prints timings; asserts nothing about time (its ctest run, label bench, checks it still runs).
# Usage: run_analyze_bench.sh [BUILD_DIR] [--quick] [--scale K] [--once]
#   (BUILD_DIR default: <repo>/build; --once: one run per measurement instead of best of 3)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=$root/build
writer_args=() scale=1 runs=3
while (( $# )); do
  case $1 in
    --quick) writer_args+=(--quick) ;;
    --scale) scale=$2; writer_args+=(--scale "$2"); shift ;;
    --once) runs=1 ;;
    -*) echo "run_analyze_bench.sh: unknown option $1" >&2; exit 64 ;;
    *) build=$1 ;;
  esac
  shift
done
harness=$build/harness/cli/harness
writer=$build/tests/bench/analysis/write_synthetic_db
for b in "$harness" "$writer"; do [[ -x $b ]] || { echo "missing $b (cmake --build $build --target harness write_synthetic_db)" >&2; exit 2; }; done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db=$work/campaign.db

t0=$(date +%s.%N)
records=$("$writer" "$db" "${writer_args[@]}")
t1=$(date +%s.%N)
printf 'synthetic DB: %d cases, %s canary records, %.0f MiB, written in %.1f s\n' "$(( 180 * scale ))" \
  "$records" "$(( $(stat -c %s "$db") / 1048576 ))" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')"

measure() {  # measure LABEL ARGS...: best of $runs wall times, max RSS of those runs
  local label=$1; shift
  local best=999999 rss=0
  for (( i = 0; i < runs; ++i )); do
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
echo "harness analyze (B = 10000, best of $runs; nproc $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg)):"
measure "report.md + report.json + CSVs" --no-figures
ls "$work/out" | tr '\n' ' ' | sed 's/^/    wrote: /'; echo
no_fig=$(cat "$work/last")
if (( scale != 1 )); then
  echo "  figures: timed at scale 1 only"
elif /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  measure "same + figures (matplotlib)"
  printf '  %-38s %6.2f s\n' "figures alone (difference)" "$(awk -v a="$(cat "$work/last")" -v b="$no_fig" 'BEGIN {print a - b}')"
else
  echo "  figures: python3-matplotlib not installed, not timed"
fi
