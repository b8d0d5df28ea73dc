"""Checks analysis/report/figures.py's cases_from_json(FILE) against harness_analysis.load_campaign(DB)["cases"]:
same keys, same values (NaN where NaN), same kinds (text lists, numpy arrays). Exit 0 when equal, else
prints the first difference and exits 1.
Usage: PYTHONPATH=<module dir>:<analysis src dir> python3 cases_json_check.py DB CASES_JSON"""
import sys

import numpy as np

import figures
import harness_analysis as ha

db, path = sys.argv[1], sys.argv[2]
want = ha.load_campaign(db)["cases"]
got = figures.cases_from_json(path)
if set(want) != set(got):
    sys.exit(f"keys differ: only in module {sorted(set(want) - set(got))}, only in JSON {sorted(set(got) - set(want))}")
for k, w in want.items():
    g = got[k]
    if isinstance(w, list):
        if not isinstance(g, list) or g != w:
            sys.exit(f"{k}: text column differs")
        continue
    w, g = np.asarray(w), np.asarray(g)
    if w.dtype.kind != g.dtype.kind or w.shape != g.shape:
        sys.exit(f"{k}: dtype/shape {w.dtype}/{w.shape} vs {g.dtype}/{g.shape}")
    if w.dtype.kind == "f":
        if not np.array_equal(w, g, equal_nan=True):
            sys.exit(f"{k}: values differ")
    elif not np.array_equal(w, g):
        sys.exit(f"{k}: values differ")
print(f"{len(want)} columns x {len(want['case_id'])} cases equal")
