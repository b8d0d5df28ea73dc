#!/usr/bin/python3
"""Independent NumPy reference of the primary estimator (docs/DESIGN.md "Analysis").

Written from docs/PROTOCOL.md and analysis/README.md "Decisions", without reference to the C++
code: reads the campaign DB with sqlite3, computes each case's pressure-phase p99 response time per
canary (numpy.quantile, method="linear" = Hyndman-Fan type 7), forms matched blocks (same
triplet_id, one case per arm), d = ln(p99_treatment / p99_comparator) for each comparison of the
declared family, strata = (vm, regime) with equal weights, point estimate = exp(mean over strata of
stratum means), and a stratified bootstrap that resamples triplets with replacement within each
stratum (same indices for all comparisons), percentile interval at 1 - alpha/m on the log scale
(type 7), exponentiated. The corrected interval rescales each resampled stratum mean about the
stratum mean by sqrt(n/(n-1)).

Arms and comparisons come from the DB: the arms are the `arms` table ordered by
position; without one (or an empty one) the study's arms found in the cases, the schedule and the
comparisons, in the study's order, then other names sorted. The comparisons are the plan JSON's
analysis.comparisons (campaign_meta schedule_json), else the campaign YAML's, else the study's
four; "<canary>:<comparator>" means treatment bounded-reclaim, "<canary>:<treatment>/<comparator>"
names both. STUDY_ARMS below is the study's published arms (the only list of them here): it orders
a DB without an arms table and spells the defaults.

Outcomes (docs/PROTOCOL.md "Every case keeps its outcome"):
  - a pressure-phase request (scheduled_ns in [pressure start, pressure end)) without a completion
    time is censored: it enters the quantile as (observation end - scheduled start), observation
    end = the start of the case's restoration phase (no restoration phase: the latest phase end);
  - a request the schedule implies but the trace lacks (truncated trace, seq gaps) is censored the
    same way; the schedule is origin + seq x period (period = spec canaries.period_ms), origin =
    scheduled_ns - seq x period of the first recorded request, or for an empty trace the warmup
    start (+ canaries.sqlite_offset_ms for SQLite when the spec has it);
  - a `lost` case has no trace: its p99 per canary is the largest p99 of that canary among the
    usable completed cases (worst-observed imputation); its triplet is kept;
  - a completed case with a response <= 0 or without a pressure phase is a recording error: the
    case, and so its triplet, is excluded;
  - a deadline miss (docs/DESIGN.md "Canaries") is a pressure-phase request that completed after the
    next scheduled start (completion > scheduled start + period), or a censored one (it never
    completed, or the trace lacks it).
Per arm the output counts completed and lost cases, imputed p99 values, censored requests
per canary, cases with a truncated trace and cases with a censored p99 ("counts"), and per canary
the deadline misses and the pressure-phase requests (recorded + lacking) summed over the usable
completed cases ("deadline_misses", "requests": a lost case has no trace and is in neither); and
gives every case's p99 per canary ("case_p99", imputed ones flagged).

The generator is numpy's PCG64, so bounds agree with the C++ (mt19937_64) only within Monte
Carlo tolerance ("lower_band" / "upper_band": the range another bootstrap's bound falls in);
point estimates agree to rounding.

Usage:
  bootstrap_ref.py DB [--replicates B] [--seed S] [--alpha A]          -> JSON on stdout
  bootstrap_ref.py --matrix CSV [--replicates B] [--seed S]            -> JSON (+ elapsed_s)
     CSV rows: stratum,d1,...,dm (header line optional)
"""
import argparse
import json
import sqlite3
import sys
import time

import numpy as np

# The study's arms in the study's order; its treatment.
STUDY_ARMS = ("static-zram", "delayed-activation", "bounded-reclaim")
STUDY_TREATMENT = STUDY_ARMS[2]
CANARIES = ("compute", "sqlite")


def label(canary, treatment, comparator):
    """A comparison's label: the arm names as declared (no short names)."""
    return f"{canary}: {treatment} / {comparator}"


STUDY_COMPARISONS = [(can, STUDY_TREATMENT, comp) for can in CANARIES
                     for comp in STUDY_ARMS if comp != STUDY_TREATMENT]


def parse_comparison(v):
    """(canary, treatment, comparator) of one spelling, or None."""
    if isinstance(v, dict):
        c = (v.get("canary"), v.get("treatment"), v.get("comparator"))
    elif isinstance(v, str) and ":" in v:
        canary, rest = v.split(":", 1)
        c = (canary,) + (tuple(rest.split("/", 1)) if "/" in rest else (STUDY_TREATMENT, rest))
    else:
        return None
    if c[0] not in CANARIES or not c[1] or not c[2] or c[1] == c[2]:
        return None
    return c


def comparisons_from_db(con):
    meta = dict(con.execute("SELECT key, value FROM campaign_meta").fetchall())
    declared = None
    try:
        plan = json.loads(meta.get("schedule_json", "null"))
        if isinstance(plan, dict) and isinstance(plan.get("analysis"), dict) and \
                isinstance(plan["analysis"].get("comparisons"), list):
            declared = plan["analysis"]["comparisons"]
    except ValueError:
        pass
    if declared is None and "campaign_yaml" in meta:
        try:
            import yaml  # python3-yaml (Debian); only for a DB whose plan JSON lacks the list
            doc = yaml.safe_load(meta["campaign_yaml"])
            if isinstance(doc, dict) and isinstance(doc.get("analysis"), dict) and \
                    isinstance(doc["analysis"].get("comparisons"), list):
                declared = doc["analysis"]["comparisons"]
        except Exception:
            pass
    out = []
    for v in declared or []:
        c = parse_comparison(v)
        if c is not None and c not in out:
            out.append(c)
    return out or list(STUDY_COMPARISONS)


def arms_from_db(con, comparisons):
    if con.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='arms'").fetchone():
        arms = [r[0] for r in con.execute("SELECT name FROM arms ORDER BY position, name")]
        if arms:
            return arms
    names = {r[0] for r in con.execute("SELECT configuration FROM cases")}
    if con.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='schedule'").fetchone():
        names |= {r[0] for r in con.execute("SELECT configuration FROM schedule")}
    for _can, t, c in comparisons:
        names |= {t, c}
    study = [a for a in STUDY_ARMS if a in names]
    return study + sorted(names - set(study))


def case_latency(con, case_id, canary, spec):
    """(p99 us, censored requests, truncated, deadline misses, requests) of one completed case and
    canary; None when the case has no pressure phase or no request scheduled in it; p99 None for a
    response <= 0."""
    phases = {p: (s, e) for p, s, e in
              con.execute("SELECT phase, start_ns, end_ns FROM phases WHERE case_id=?", (case_id,))}
    if "pressure" not in phases or phases["pressure"][1] is None:
        return None
    start, end = phases["pressure"]
    if "restoration" in phases and phases["restoration"][0] is not None:
        obs_end = phases["restoration"][0]
    else:
        obs_end = max(e for _, e in phases.values() if e is not None)
    canaries = spec.get("canaries", {}) if isinstance(spec, dict) else {}
    period = int(canaries.get("period_ms", 100)) * 1_000_000
    rows = con.execute("SELECT seq, scheduled_ns, completion_ns FROM canary_requests WHERE case_id=? AND canary=? "
                       "ORDER BY seq", (case_id, canary)).fetchall()
    if rows:
        origin = rows[0][1] - rows[0][0] * period
    else:
        origin = phases.get("warmup", (start, None))[0]
        if canary == "sqlite":
            origin += int(canaries.get("sqlite_offset_ms", 0)) * 1_000_000
    resp, censored, nonpositive, late = [], 0, False, 0
    recorded = set()
    for seq, sched, comp in rows:
        recorded.add(seq)
        if not start <= sched < end:
            continue
        if comp is None:
            resp.append((obs_end - sched) / 1000.0)
            censored += 1
        else:
            resp.append((comp - sched) / 1000.0)
            nonpositive = nonpositive or comp <= sched
            late += 1 if comp > sched + period else 0
    # Every seq whose scheduled start lies in the pressure phase, recorded or not.
    k_lo = max(0, -(-(start - origin) // period))
    k_hi = -(-(end - origin) // period)
    missing = [k for k in range(k_lo, k_hi) if k not in recorded]
    for k in missing:
        resp.append((obs_end - (origin + k * period)) / 1000.0)
    censored += len(missing)
    if not resp:
        return None
    p99 = None if nonpositive else float(np.quantile(np.array(resp), 0.99, method="linear"))
    return p99, censored, len(missing) > 0, late + censored, len(resp)


def load_matrix_from_db(path):
    """(d matrix, strata, {"counts": per arm, "case_p99": per case, "arms", "labels"})."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    comparisons = comparisons_from_db(con)
    arms = arms_from_db(con, comparisons)
    cases = con.execute("SELECT case_id, vm, regime, triplet_id, configuration, status, spec_json FROM cases "
                        "WHERE status IN ('completed', 'lost') AND triplet_id IS NOT NULL").fetchall()
    counts = {c: {"completed": 0, "lost": 0, "imputed_p99": 0, "truncated_traces": 0, "censored_p99": 0,
                  "censored_requests": {k: 0 for k in CANARIES}, "deadline_misses": {k: 0 for k in CANARIES},
                  "requests": {k: 0 for k in CANARIES}} for c in arms}
    p99, usable = {}, {}
    for case_id, _vm, _regime, _tid, conf, status, spec_json in cases:
        if conf not in counts:
            continue
        counts[conf][status] += 1
        if status != "completed":
            continue
        try:
            spec = json.loads(spec_json) if spec_json else {}
        except ValueError:
            spec = None
        ok, truncated, censored, sums = spec is not None, False, False, {}
        for can in CANARIES:
            lat = case_latency(con, case_id, can, spec) if ok else None
            if lat is None or lat[0] is None:
                ok = False
                continue
            p99[(case_id, can)] = lat[0]
            counts[conf]["censored_requests"][can] += lat[1]
            censored = censored or lat[1] > 0
            truncated = truncated or lat[2]
            sums[can] = lat[3:5]
        if ok:  # misses and requests of usable cases only (as the descriptive medians)
            for can, (misses, n) in sums.items():
                counts[conf]["deadline_misses"][can] += misses
                counts[conf]["requests"][can] += n
        counts[conf]["truncated_traces"] += 1 if truncated else 0
        counts[conf]["censored_p99"] += 1 if censored else 0
        usable[case_id] = ok
    worst = {can: max((v for (cid, c), v in p99.items() if c == can and usable.get(cid)), default=None)
             for can in CANARIES}
    for case_id, _vm, _regime, _tid, conf, status, _spec in cases:
        if status == "lost" and conf in counts:
            for can in CANARIES:
                if worst[can] is not None:
                    p99[(case_id, can)] = worst[can]
                    counts[conf]["imputed_p99"] += 1
            usable[case_id] = all(worst[can] is not None for can in CANARIES)
    trip = {}
    for case_id, vm, regime, tid, conf, _status, _spec in cases:
        trip.setdefault(tid, {"vm": vm, "regime": regime, "cases": {}})["cases"].setdefault(conf, []).append(case_id)
    case_p99 = {cid: {"compute": p99.get((cid, "compute")), "sqlite": p99.get((cid, "sqlite")),
                      "imputed": st == "lost"} for cid, _v, _r, _t, _c, st, _s in cases}
    rows, strata_keys = [], []
    for tid in sorted(trip):
        t = trip[tid]
        if set(t["cases"]) != set(arms) or any(len(v) != 1 for v in t["cases"].values()):
            continue
        ids = {conf: v[0] for conf, v in t["cases"].items()}
        if not all(usable.get(cid) for cid in ids.values()):
            continue
        p = {(conf, can): p99[(cid, can)] for conf, cid in ids.items() for can in CANARIES}
        if any(not np.isfinite(v) or v <= 0 for v in p.values()):
            continue
        rows.append([np.log(p[(tr, can)] / p[(comp, can)]) for can, tr, comp in comparisons])
        strata_keys.append((t["vm"], t["regime"]))
    names = sorted(set(strata_keys))
    strata = np.array([names.index(k) for k in strata_keys], dtype=int)
    labels = [label(*c) for c in comparisons]
    return np.array(rows, dtype=float).reshape(len(rows), len(comparisons)), strata, \
        {"counts": counts, "case_p99": case_p99, "arms": arms, "labels": labels}


def estimate(d, strata, replicates, seed, alpha):
    S = int(strata.max()) + 1
    groups = [np.flatnonzero(strata == s) for s in range(S)]
    means = np.array([d[g].mean(axis=0) for g in groups])            # S x m
    point = means.mean(axis=0)
    rng = np.random.Generator(np.random.PCG64(seed))
    plain = np.zeros((replicates, d.shape[1]))
    corr = np.zeros((replicates, d.shape[1]))
    for s, g in enumerate(groups):
        n = len(g)
        idx = rng.integers(0, n, size=(replicates, n))
        m = d[g][idx].mean(axis=1)                                    # B x m
        plain += m
        f = np.sqrt(n / (n - 1.0)) if n > 1 else 1.0
        corr += means[s] + f * (m - means[s])
    plain /= S
    corr /= S
    level = 1 - alpha / d.shape[1]
    a = (1 - level) / 2
    lo, hi = np.quantile(plain, [a, 1 - a], axis=0, method="linear")
    clo, chi = np.quantile(corr, [a, 1 - a], axis=0, method="linear")
    # Distribution-free Monte Carlo band of each bound: another bootstrap of B replicates (the
    # C++ one) puts its a-quantile within the quantiles at a -/+ 5 x sqrt(2 a (1 - a) / B) of this
    # one (binomial count of replicates below the bound; valid for discrete, heavy-tailed
    # replicate distributions, where a normal-density tolerance is not).
    delta = 5 * np.sqrt(2 * a * (1 - a) / replicates)
    band = lambda q: np.quantile(plain, [max(0.0, q - delta), min(1.0, q + delta)], axis=0, method="linear")
    lo_band, hi_band = band(a), band(1 - a)
    return {
        "labels": [f"comparison {j + 1}" for j in range(d.shape[1])], "level": level, "replicates": replicates, "seed": seed,
        "triplets": int(d.shape[0]), "strata": S,
        "log_point": point.tolist(), "estimate": np.exp(point).tolist(),
        "lower": np.exp(lo).tolist(), "upper": np.exp(hi).tolist(),
        "corrected_lower": np.exp(clo).tolist(), "corrected_upper": np.exp(chi).tolist(),
        "log_sd": plain.std(axis=0, ddof=1).tolist(),
        "lower_band": np.exp(lo_band).T.tolist(), "upper_band": np.exp(hi_band).T.tolist(),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("db", nargs="?")
    ap.add_argument("--matrix")
    ap.add_argument("--replicates", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--alpha", type=float, default=0.05)
    a = ap.parse_args()
    extra = None
    if a.matrix:
        raw = np.genfromtxt(a.matrix, delimiter=",", skip_header=0)
        raw = raw[~np.isnan(raw).any(axis=1)]
        strata, d = raw[:, 0].astype(int), raw[:, 1:]
    elif a.db:
        d, strata, extra = load_matrix_from_db(a.db)
    else:
        ap.error("give a DB or --matrix CSV")
    if len(d) == 0:
        sys.exit("bootstrap_ref: no complete matched triplet")
    t0 = time.perf_counter()
    out = estimate(d, strata, a.replicates, a.seed, a.alpha)
    out["elapsed_s"] = time.perf_counter() - t0
    if extra is not None:
        out.update(extra)
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
