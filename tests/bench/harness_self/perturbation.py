#!/usr/bin/python3
"""Canary p99 with telemetry on (1 Hz) vs off (0.1 Hz) in matched pairs (perturbation_bench.sh).
Usage: perturbation.py COLLECT_DIR [B]. p99: numpy's default quantile (Hyndman-Fan type 7, as
the analysis) of the response time (completion - scheduled) of the requests scheduled in the
pressure phase; a request that never completed counts as +inf. Ratio: geometric mean over pairs
of p99(on) / p99(off), 95% percentile interval of B bootstrap resamples of the pairs (seed 1).
Exits 1 when a case is missing or did not complete."""
import sqlite3
import sys

import numpy as np

d = sys.argv[1]
B = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
cases = [l.split() for l in open(d + "/cases.txt") if len(l.split()) == 4]
pairs = {}
failed = []
for pair, arm, case_id, rc in cases:
    db = sqlite3.connect(f"{d}/bundles/{case_id}.db")
    status, = db.execute("SELECT status FROM cases").fetchone()
    if status != "completed":
        failed.append(f"{case_id}: {status} (exit {rc})")
        continue
    p0, p1 = db.execute("SELECT start_ns, end_ns FROM phases WHERE phase = 'pressure'").fetchone()
    per = {}
    for canary in ("compute", "sqlite"):
        r = np.array([np.inf if c is None else (c - s) / 1e6 for s, c in db.execute(
            "SELECT scheduled_ns, completion_ns FROM canary_requests WHERE canary = ? AND scheduled_ns >= ? "
            "AND scheduled_ns < ?", (canary, p0, p1))])
        per[canary] = (float(np.quantile(r, 0.99)) if len(r) else float("nan"), len(r))
    pairs.setdefault(int(pair), {})[arm] = per
print(f"{len(cases)} cases run, {len(failed)} not completed")
if 0 in pairs:  # DISCARD_FIRST: the boot's first case, run and checked but not in any pair
    print("first case of the boot, not counted: " + ", ".join(
        f"{c} p99 {v[0]:.2f} ms" for c, v in pairs.pop(0)["discard"].items()))
for f in failed:
    print("  " + f)
full = sorted(p for p, v in pairs.items() if "on" in v and "off" in v)
print("| pair | order | canary | p99 on (ms) | p99 off (ms) | on/off | requests on/off |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for p in full:
    for c in ("compute", "sqlite"):
        on, off = pairs[p]["on"][c], pairs[p]["off"][c]
        print(f"| {p} | {'on first' if p % 2 else 'off first'} | {c} | {on[0]:.2f} | {off[0]:.2f} | "
              f"{on[0] / off[0]:.3f} | {on[1]}/{off[1]} |")
rng = np.random.default_rng(1)
for c in ("compute", "sqlite"):
    lr = np.array([np.log(pairs[p]["on"][c][0] / pairs[p]["off"][c][0]) for p in full])
    if len(lr) == 0 or not np.all(np.isfinite(lr)):
        print(f"{c}: no finite ratio over {len(lr)} pairs")
        continue
    boot = lr[rng.integers(0, len(lr), size=(B, len(lr)))].mean(axis=1)
    lo, hi = np.exp(np.percentile(boot, [2.5, 97.5]))
    print(f"{c}: p99 on/off = {np.exp(lr.mean()):.3f} (95% bootstrap interval {lo:.3f} .. {hi:.3f}, "
          f"{len(lr)} pairs, B = {B}); goal upper bound < 1.05: {'met' if hi < 1.05 else 'missed'}")
sys.exit(1 if failed or not full else 0)
