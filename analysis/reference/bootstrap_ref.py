#!/usr/bin/python3
"""Independent NumPy reference of the primary estimator (docs/DESIGN.md "Analysis").

Written without reference to the C++ code: reads the campaign DB with sqlite3, computes each
completed case's pressure-phase p99 response time per canary (numpy.quantile, method="linear" =
Hyndman-Fan type 7), forms matched triplets (same triplet_id, one case per configuration),
d = ln(p99_reclaim / p99_comparator) for the four comparisons, strata = (vm, regime) with equal
weights, point estimate = exp(mean over strata of stratum means), and a stratified bootstrap that
resamples triplets with replacement within each stratum (same indices for all four comparisons),
percentile interval at 1 - alpha/4 on the log scale (type 7), exponentiated. The corrected
interval rescales each resampled stratum mean about the stratum mean by sqrt(n/(n-1)).

The generator is numpy's PCG64, so bounds agree with the C++ (mt19937_64) only within Monte
Carlo tolerance; point estimates agree to rounding.

Usage:
  bootstrap_ref.py DB [--replicates B] [--seed S] [--alpha A]          -> JSON on stdout
  bootstrap_ref.py --matrix CSV [--replicates B] [--seed S]            -> JSON (+ elapsed_s)
     CSV rows: stratum,d1,d2,d3,d4 (header line optional)
"""
import argparse
import json
import sqlite3
import sys
import time

import numpy as np

COMPARISONS = [("compute", "static-zram"), ("compute", "delayed-activation"),
               ("sqlite", "static-zram"), ("sqlite", "delayed-activation")]
LABELS = ["compute: reclaim / static", "compute: reclaim / delayed",
          "sqlite: reclaim / static", "sqlite: reclaim / delayed"]


def case_p99(con, case_id, canary):
    row = con.execute("SELECT start_ns, end_ns FROM phases WHERE case_id=? AND phase='pressure'",
                      (case_id,)).fetchone()
    if row is None or row[1] is None:
        return None
    start, end = row
    rows = con.execute("SELECT scheduled_ns, completion_ns FROM canary_requests WHERE case_id=? AND canary=? "
                       "AND scheduled_ns >= ? AND scheduled_ns < ?", (case_id, canary, start, end)).fetchall()
    if not rows:
        return None
    resp = np.array([np.inf if c is None else (c - s) / 1000.0 for s, c in rows], dtype=float)
    return float(np.quantile(resp, 0.99, method="linear"))


def load_matrix_from_db(path):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    cases = con.execute("SELECT case_id, vm, regime, triplet_id, configuration FROM cases "
                        "WHERE status='completed' AND triplet_id IS NOT NULL").fetchall()
    trip = {}
    for case_id, vm, regime, tid, conf in cases:
        trip.setdefault(tid, {"vm": vm, "regime": regime, "cases": {}})["cases"][conf] = case_id
    rows, strata_keys = [], []
    for tid in sorted(trip):
        t = trip[tid]
        if set(t["cases"]) != {"static-zram", "delayed-activation", "bounded-reclaim"}:
            continue
        p = {(conf, can): case_p99(con, cid, can) for conf, cid in t["cases"].items()
             for can in ("compute", "sqlite")}
        if any(v is None or not np.isfinite(v) or v <= 0 for v in p.values()):
            continue
        rows.append([np.log(p[("bounded-reclaim", can)] / p[(comp, can)]) for can, comp in COMPARISONS])
        strata_keys.append((t["vm"], t["regime"]))
    names = sorted(set(strata_keys))
    strata = np.array([names.index(k) for k in strata_keys], dtype=int)
    return np.array(rows, dtype=float), strata


def estimate(d, strata, replicates, seed, alpha):
    S = int(strata.max()) + 1
    groups = [np.flatnonzero(strata == s) for s in range(S)]
    means = np.array([d[g].mean(axis=0) for g in groups])            # S x 4
    point = means.mean(axis=0)
    rng = np.random.Generator(np.random.PCG64(seed))
    plain = np.zeros((replicates, d.shape[1]))
    corr = np.zeros((replicates, d.shape[1]))
    for s, g in enumerate(groups):
        n = len(g)
        idx = rng.integers(0, n, size=(replicates, n))
        m = d[g][idx].mean(axis=1)                                    # B x 4
        plain += m
        f = np.sqrt(n / (n - 1.0)) if n > 1 else 1.0
        corr += means[s] + f * (m - means[s])
    plain /= S
    corr /= S
    level = 1 - alpha / 4
    a = (1 - level) / 2
    lo, hi = np.quantile(plain, [a, 1 - a], axis=0, method="linear")
    clo, chi = np.quantile(corr, [a, 1 - a], axis=0, method="linear")
    return {
        "labels": LABELS, "level": level, "replicates": replicates, "seed": seed,
        "triplets": int(d.shape[0]), "strata": S,
        "log_point": point.tolist(), "estimate": np.exp(point).tolist(),
        "lower": np.exp(lo).tolist(), "upper": np.exp(hi).tolist(),
        "corrected_lower": np.exp(clo).tolist(), "corrected_upper": np.exp(chi).tolist(),
        "log_sd": plain.std(axis=0, ddof=1).tolist(),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("db", nargs="?")
    ap.add_argument("--matrix")
    ap.add_argument("--replicates", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--alpha", type=float, default=0.05)
    a = ap.parse_args()
    if a.matrix:
        raw = np.genfromtxt(a.matrix, delimiter=",", skip_header=0)
        raw = raw[~np.isnan(raw).any(axis=1)]
        strata, d = raw[:, 0].astype(int), raw[:, 1:]
    elif a.db:
        d, strata = load_matrix_from_db(a.db)
    else:
        ap.error("give a DB or --matrix CSV")
    if len(d) == 0:
        sys.exit("bootstrap_ref: no complete matched triplet")
    t0 = time.perf_counter()
    out = estimate(d, strata, a.replicates, a.seed, a.alpha)
    out["elapsed_s"] = time.perf_counter() - t0
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
