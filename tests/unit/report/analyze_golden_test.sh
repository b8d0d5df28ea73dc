#!/usr/bin/env bash
# `harness analyze` on stored campaign DBs writes the same report.md, report.json and CSV tables
# as the commit that stored them, provenance aside (issue 56: a restructuring leaves every report
# as it was). Each folder of tests/fixtures/analysis-golden/ holds one campaign DB as a
# compressed SQL dump (db.sql.zst), the analyze arguments used (args) and the expected outputs
# (expected/). Provenance is what names the build and the moment: report.md's "- Harness:" and
# "- Generated:" lines, report.json's "provenance" object, and the CSV tables' .meta.json
# sidecars (not compared).
#
# Usage: analyze_golden_test.sh HARNESS [--update]
#   --update rewrites every expected/ from HARNESS: only in a commit of its own that says which
#   report change it records (tests/README.md).
set -euo pipefail
harness=$1
update=${2:-}
root=$(cd "$(dirname "$0")/../../.." && pwd)
fixtures=$root/tests/fixtures/analysis-golden
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# normalize DIR: provenance dropped from report.md and report.json, sidecars removed.
normalize() {
  local d=$1
  rm -f "$d"/*.meta.json "$d"/report.html "$d"/*.png
  sed -i -e '/^- Harness: /d' -e '/^- Generated: /d' "$d/report.md"
  /usr/bin/python3 - "$d/report.json" <<'PY'
import json, sys
p = sys.argv[1]
j = json.load(open(p))
j.pop("provenance", None)
json.dump(j, open(p, "w"), indent=1, sort_keys=True)
open(p, "a").write("\n")
PY
}

cases=0 failed=0
for dir in "$fixtures"/*/; do
  name=$(basename "$dir")
  cases=$((cases + 1))
  db=$work/$name/campaign.db
  mkdir -p "$work/$name"
  zstd -dc "$dir/db.sql.zst" | sqlite3 "$db"
  read -r -a args <"$dir/args"
  (cd "$work/$name" && "$harness" analyze campaign.db --out out --no-figures "${args[@]}" >/dev/null)
  normalize "$work/$name/out"
  if [[ "$update" == --update ]]; then
    rm -rf "$dir/expected"
    cp -r "$work/$name/out" "$dir/expected"
    echo "analyze_golden: $name: expected/ rewritten"
  elif ! diff -r "$dir/expected" "$work/$name/out" >"$work/$name.diff"; then
    failed=$((failed + 1))
    echo "analyze_golden: $name: the report differs from tests/fixtures/analysis-golden/$name/expected (first 40 lines of the diff):" >&2
    head -40 "$work/$name.diff" >&2
  else
    echo "analyze_golden: $name: $(ls "$dir/expected" | wc -l) files identical"
  fi
done
if ((cases < 3)); then
  echo "analyze_golden: only $cases fixture(s) under $fixtures; expected at least 3" >&2
  exit 1
fi
((failed == 0))
