#!/usr/bin/python3
"""Run by test_python_module.cpp: exercises the harness_analysis module from Debian's python3.
argv: DB OUT_JSON. Loads the campaign into numpy arrays, runs the bootstrap (B=500, seed 9, with
1 and 2 threads) and the primary analysis, and writes what the C++ side compares, as JSON."""
import json
import sys

import numpy as np
import harness_analysis as ha

db, out = sys.argv[1], sys.argv[2]
d = ha.load_campaign(db)
assert isinstance(d["log_ratios"], np.ndarray) and d["log_ratios"].shape[1] == 4
assert d["cases"]["compute_p99_us"].dtype == np.float64
b1 = ha.bootstrap(d["log_ratios"], d["strata"], 500, 9, 1)
b2 = ha.bootstrap(d["log_ratios"], d["strata"], 500, 9, 2)
p = ha.primary(db, replicates=2000, seed=9, threads=2)
# telemetry_column (the zram time course's read, one connection for all cases) gives each case's
# series as case_timeseries does, case by case, in the order asked.
ids = d["cases"]["case_id"][::-1]
cols = ha.telemetry_column(db, ids, "zram_orig_data_bytes")
tel_same = len(cols) == len(ids) and len(ids) > 0
for cid, (t, z) in zip(ids, cols):
    want = ha.case_timeseries(db, cid, canaries=False)["telemetry"]
    tel_same = tel_same and len(t) > 1 and np.array_equal(t, want["t_s"]) and \
        np.array_equal(z, want["zram_orig_data_bytes"], equal_nan=True)
try:
    ha.telemetry_column(db, ids[:1], "t_ns; DROP TABLE cases")
    tel_bad_column_refused = False
except ValueError:
    tel_bad_column_refused = True
json.dump({
    "shape": list(d["log_ratios"].shape),
    "strata": d["strata"].tolist(),
    "log_ratios": d["log_ratios"].tolist(),
    "plain_row0": b1["plain"][0].tolist(),
    "plain_sum": float(b1["plain"].sum()),
    "threads_identical": bool(np.array_equal(b1["plain"], b2["plain"]) and np.array_equal(b1["corrected"], b2["corrected"])),
    "estimates": [c["estimate"] for c in p["comparisons"]],
    "telemetry_column_same": bool(tel_same),
    "telemetry_column_bad_column_refused": tel_bad_column_refused,
    "quantile7": ha.quantile7([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0], 0.99),
}, open(out, "w"))
