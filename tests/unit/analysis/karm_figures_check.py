#!/usr/bin/python3
"""Run by test_karm_report.cpp: draws the figures of a k-arm campaign DB with analysis/report/figures.py
(imported as a module; PYTHONPATH holds harness_analysis and analysis/) and records what each
figure shows, for the C++ side to check: the forest plot's rows (top to bottom), axis label and
title; the p99-by-regime legend and the columns drawn in one regime; the zram time course's
panels; the reclaim-execution figure's trigger-delay ticks; the trade-off figure's panels and the
points each holds (their labels), drawn from TRADEOFF_JSON (the report's extra.tradeoff). Then the
same forest plot for the study's campaign (a synthetic DB written here). Every figure of these
synthetic DBs must carry "SYNTHETIC DATA" (figures.save, set up as main does from
ha.synthetic_banner). argv: DB OUT_JSON TRADEOFF_JSON."""
import json
import os
import sys
import tempfile

import figures
import harness_analysis as ha

db, out = sys.argv[1], sys.argv[2]
drawn = []
figures.plt.close = lambda fig=None: drawn.append(fig)  # keep each figure for inspection
figures.SYNTHETIC = ha.synthetic_banner(db)
marked = {}  # figure function -> its figure carries "SYNTHETIC DATA"


def draw(fn, *args):
    drawn.clear()
    fn(*args)
    marked[fn.__name__] = any(t.get_text() == "SYNTHETIC DATA" for t in drawn[-1].texts)
    return drawn[-1]


def forest_of(path, tmp):
    prim = ha.primary(path, replicates=2000, seed=1)
    cases = ha.load_campaign(path)["cases"]
    figures.set_arms(prim["arms"])
    ax = draw(figures.forest, prim, cases, os.path.join(tmp, "forest.png")).axes[0]
    ticks = sorted(zip(ax.get_yticks(), [t.get_text() for t in ax.get_yticklabels()]), reverse=True)
    return prim, cases, ax, [t for _, t in ticks]


with tempfile.TemporaryDirectory() as tmp:
    prim, cases, ax, rows = forest_of(db, tmp)
    res = {"forest_rows": rows, "forest_xlabel": ax.get_xlabel(), "forest_title": ax.get_title()}
    fig = draw(figures.p99_by_regime, cases, os.path.join(tmp, "p99.png"))
    res["p99_legend"] = [t.get_text() for t in fig.axes[0].get_legend().get_texts()
                         if t.get_text() in figures.CONFIGS]
    # the median bars of the first regime (x < 0.5): one per arm
    res["p99_columns_per_regime"] = sum(1 for c in fig.axes[0].collections
                                        if c.__class__.__name__ == "LineCollection"
                                        and c.get_segments() and c.get_segments()[0][0][0] < 0.5)
    fig = draw(figures.zram_timecourse, db, cases, os.path.join(tmp, "zram.png"))
    res["zram_panels"] = [a.get_title() for a in fig.axes]
    fig = draw(figures.reclaim_execution, cases, os.path.join(tmp, "reclaim.png"))
    res["trigger_ticks"] = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    with open(sys.argv[3]) as f:
        prim["tradeoff"] = json.load(f)
    fig = draw(figures.tradeoff, prim, cases, os.path.join(tmp, "tradeoff.png"))
    res["tradeoff_panels"] = {a.get_title(): [t.get_text() for t in a.texts] for a in fig.axes}
    res["tradeoff_points"] = {a.get_title(): len(a.containers) for a in fig.axes}
    study = os.path.join(tmp, "study.db")
    ha.write_synthetic(study, vms=2, per_stratum=2, pressure_s=5)
    _, _, sax, srows = forest_of(study, tmp)
    res["study_forest_rows"] = srows
    res["study_forest_xlabel"] = sax.get_xlabel()
    res["synthetic_banner"] = figures.SYNTHETIC
    res["marked"] = marked
with open(out, "w") as f:
    json.dump(res, f)
