#!/usr/bin/python3
"""Figures of a campaign analysis, through the pybind11 module harness_analysis (matplotlib, Agg).

  forest.png              one row per comparison of the family (the study's four, or the declared
                          family of a k-arm campaign) with its simultaneous interval (98.75% for the
                          study's four) and the corrected secondary interval, reference line at 1 and
                          the 0.95 benefit threshold
  tradeoff.png            what each declared comparison's treatment bought against what it cost: one point
                          per comparison (one panel per canary), the net DRAM freed against the comparator
                          (MiB, secondary interval) against the p99 ratio (Table 4's interval); drawn when
                          --primary-json carries "tradeoff" (harness analyze's extra.tradeoff)
  p99_by_regime.png       pressure-phase p99 per case, by regime and arm (one column per arm; both canaries)
  timeseries_<case>.png   one case: PSI some/full, memory.current, swap, zram, canary response times,
                          with the phases, the trigger and the reclaim action marked
  zram_timecourse.png     zram orig_data per arm (one panel each) vs time since the pressure start: every case
                          thin, the median across cases bold, the median trigger time dashed
  reclaim_execution.png   trigger delay per configuration; memory.reclaim write duration; achieved /
                          requested across the write and conservative (minus concurrent limit reclaim)

Usage: PYTHONPATH=<build>/analysis/python /usr/bin/python3 analysis/report/figures.py --db DB --out DIR
       [--replicates B] [--seed S] [--case CASE_ID] [--primary-json FILE] [--cases-json FILE] [--jobs N]
       [--handoff-stdin]
       (--primary-json: the primary result `harness analyze` computed, in harness_analysis.primary()'s
       keys; without it the script runs the bootstrap itself; --cases-json: the per-case columns
       `harness analyze` loaded (analysis/data/case_columns.hpp), so the script does not read every
       request of the campaign again; without it harness_analysis.load_campaign reads them;
       --handoff-stdin: started by `harness analyze` before its data exist (figures_runner.hpp,
       FiguresProcess): after the imports, wait for one line on stdin, the JSON object
       {"primary_json": FILE, "cases_json": FILE}; end of file instead: exit 0 without drawing;
       --jobs: figures drawn in N processes forked after the data are loaded, default 2, at most
       the usable cores)
"""
import argparse
import json
import math
import os
import sys
import traceback

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402
import numpy as np  # noqa: E402

import harness_analysis as ha  # noqa: E402

# The SYNTHETIC DATA banner when the DB was written by the synthetic generator ("" otherwise; set in
# main from ha.synthetic_banner): every figure of such a DB carries it, so that no PNG alone can be
# taken for a result.
SYNTHETIC = ""


def save(fig, out, dpi):
    """Writes `fig` to `out`; a figure of a synthetic DB first gets the banner at its top and
    "SYNTHETIC DATA" across it."""
    if SYNTHETIC:
        fig.text(0.5, 0.5, "SYNTHETIC DATA", fontsize=44, color="#C44E52", alpha=0.25, rotation=25, ha="center",
                 va="center")
        fig.text(0.005, 0.998, SYNTHETIC, fontsize=6, color="#C44E52", ha="left", va="top")
    fig.savefig(out, dpi=dpi)

# The campaign's arms in report order (set in main from the primary result's "arms", i.e. the DB's
# arms table or the study's order; analysis/data/arms.hpp) and one colour per arm position (the study's
# three keep their colours).
CONFIGS = []
PALETTE = ["#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C", "#CCB974",
           "#64B5CD"]
COLORS = {}


def set_arms(arms):
    CONFIGS[:] = list(arms)
    COLORS.clear()
    COLORS.update({a: PALETTE[i % len(PALETTE)] for i, a in enumerate(CONFIGS)})


def reclaim_writers(cases):
    """The arms with a memory.reclaim write in some case, in report order."""
    conf = np.array(cases["configuration"])
    dur = np.asarray(cases["reclaim_duration_ms"], dtype=float)
    return [c for c in CONFIGS if np.isfinite(dur[conf == c]).any()]


def place(fig, left, right, bottom, top, wspace=0.0, hspace=0.0):
    """A fixed layout, margins and gaps between axes in inches (instead of tight_layout, which
    measures every label first: about a fifth of a figure's drawing time). The margins are those
    tight_layout gave on the benchmark campaign, with room for a tick label one digit wider."""
    w, h = fig.get_size_inches()
    axes = fig.get_axes()
    ncols = len({round(a.get_position().x0, 6) for a in axes})
    nrows = len({round(a.get_position().y0, 6) for a in axes})
    aw = (w - left - right - (ncols - 1) * wspace) / ncols
    ah = (h - bottom - top - (nrows - 1) * hspace) / nrows
    fig.subplots_adjust(left=left / w, right=1 - right / w, bottom=bottom / h, top=1 - top / h,
                        wspace=wspace / aw, hspace=hspace / ah)


TCG_LINE = 0.2  # inches: the second title line the TCG note adds


def tcg_note(cases):
    n = sum(1 for a in cases["accelerator"] if a == "tcg")
    return f"\n[{n} TCG case(s): timings inflated under TCG]" if n else ""


def forest(prim, cases, out):
    comps = prim["comparisons"]
    # left margin: a label is about 0.08 in a character (the arm names as declared); the plot keeps
    # 6.8 in of width beside it, so a long label widens the figure instead of squeezing the plot
    left = max(2.2, 0.3 + 0.08 * max(len(c["label"]) for c in comps))
    # 4.8 in high for the study's four; taller for a larger family, so every row keeps its room
    fig, ax = plt.subplots(figsize=(max(9.0, left + 6.8), max(4.8, 2.4 + 0.6 * len(comps))))
    y = np.arange(len(comps))[::-1]
    for yi, c in zip(y, comps):
        ax.plot([c["corrected_lower"], c["corrected_upper"]], [yi - 0.18] * 2, color="0.6", lw=2,
                label="corrected interval (secondary)" if yi == y[0] else None)
        ax.plot([c["lower"], c["upper"]], [yi] * 2, color="black", lw=3,
                label=f"{prim['level'] * 100:.2f}% interval (primary)" if yi == y[0] else None)
        ax.plot(c["estimate"], yi, "o", color="#C44E52", ms=8, zorder=3, label="estimate" if yi == y[0] else None)
        ax.annotate(f"{c['estimate']:.3f} [{c['lower']:.3f}, {c['upper']:.3f}]  {c['percent_change']:+.1f}%",
                    (max(c["upper"], c["corrected_upper"]), yi), xytext=(8, -4), textcoords="offset points", fontsize=9)
    ax.axvline(1.0, color="0.3", ls="-", lw=1)
    ax.axvline(0.95, color="#C44E52", ls=":", lw=1, label="0.95 (5% reduction)")
    ax.set_yticks(y)
    ax.set_yticklabels([c["label"] for c in comps])
    lo = min(min(c["corrected_lower"] for c in comps), 0.9)
    hi = max(max(c["corrected_upper"] for c in comps), 1.05)
    ax.set_xlim(lo - 0.03, hi + (hi - lo) * 0.6)
    ax.set_ylim(y.min() - 0.6, y.max() + 0.5)
    unit = prim.get("unit", "triplet")
    if prim.get("study_family", True):
        ax.set_xlabel("p99 response-time ratio, bounded reclaim / comparator (< 1 favours reclaim)")
    else:
        ax.set_xlabel("p99 response-time ratio, treatment / comparator (< 1 favours the treatment)")
    lines = verdict_lines(prim, unit)
    # Title on short lines (never clipped); the legend below the axes, clear of the labels.
    n = comps[0]["triplets"]
    family = "" if prim.get("study_family", True) else f", declared family of {len(comps)}"
    title = f"Primary comparisons ({n} matched {unit}{'' if n == 1 else 's'}{family})\n" + "\n".join(lines)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=4, frameon=False)
    ax.grid(axis="x", alpha=0.3)
    note = tcg_note(cases).strip(" []\n")
    if note:
        fig.text(0.01, 0.01, "Note: " + note + " - the intervals show the mechanism's direction, not timing "
                 "evidence.", fontsize=8, color="#A33", ha="left", va="bottom")
    place(fig, left=left, right=0.15, bottom=1.15 + (0.2 if note else 0), top=0.35 + 0.17 * len(lines))
    # the legend 0.6 in below the axes (under the x label), whatever the axes' height
    height_in = ax.get_position().height * fig.get_size_inches()[1]
    ax.get_legend().set_bbox_to_anchor((0.5, -0.6 / height_in))
    save(fig, out, 130)
    plt.close(fig)


def verdict_lines(prim, unit):
    """The verdict(s) for the forest's title: one line for a family of one treatment, one line per
    treatment for a family of several (never one verdict over the family)."""
    if not prim.get("assessable", True):
        return [f"verdict: not assessable (one {unit} per stratum)"]

    def words(v):
        w = "general benefit" if v["general_benefit"] else "no general benefit"
        return w + ("; harm: " + ", ".join(v["harm"]) if v["harm"] else "")
    if prim.get("per_treatment"):
        return [f"verdict for {v['treatment']}: {words(v)}" for v in prim.get("by_treatment", [])]
    return ["verdict: " + words(prim)]


def tradeoff(prim, cases, out):
    """Net DRAM freed (x, MiB, with its secondary interval) against the p99 ratio (y, with Table 4's
    interval), one point per declared comparison, one panel per canary; points without a freed
    estimate (no block measured it) are listed in the panel instead."""
    points = prim.get("tradeoff") or []
    canaries = [k for k in ("compute", "sqlite") if any(p["canary"] == k for p in points)]
    fig, axes = plt.subplots(1, max(1, len(canaries)), figsize=(12, 4.8), squeeze=False)
    axes = axes[0]
    several = len({p["comparator"] for p in points}) > 1
    for ax, canary in zip(axes, canaries):
        missing, xs, ys = [], [0.0], [1.0]
        for p in (p for p in points if p["canary"] == canary):
            if p["freed_mib"] is None:
                missing.append(p["label"])
                continue
            color = COLORS.get(p["treatment"], "0.3")
            x, y = p["freed_mib"], p["ratio"]
            # a percentile interval need not hold its estimate: the bars stop at the estimate then
            ax.errorbar([x], [y], xerr=[[max(0.0, x - p["freed_lower_mib"])], [max(0.0, p["freed_upper_mib"] - x)]],
                        yerr=[[max(0.0, y - p["ratio_lower"])], [max(0.0, p["ratio_upper"] - y)]], fmt="o",
                        color=color, ms=7, capsize=3, lw=1.5)
            name = p["treatment"] + (f" / {p['comparator']}" if several else "")
            ax.annotate(name, (x, y), xytext=(6, 6), textcoords="offset points", fontsize=8, color=color)
            xs += [p["freed_lower_mib"], p["freed_upper_mib"]]
            ys += [p["ratio_lower"], p["ratio_upper"]]
        xs = [v for v in xs if math.isfinite(v)]
        ys = [v for v in ys if math.isfinite(v)]
        span = max(xs) - min(xs) or 1.0
        ax.set_xlim(min(xs) - 0.08 * span, max(xs) + 0.6 * span)  # room for the labels on the right
        yspan = max(ys) - min(ys) or 0.1
        ax.set_ylim(min(ys) - 0.08 * yspan, max(ys) + 0.12 * yspan)
        ax.axhline(1.0, color="0.3", lw=1)
        ax.axvline(0.0, color="0.3", lw=1)
        ax.set_xlabel("net DRAM freed vs comparator (MiB)")
        ax.set_ylabel("p99 ratio, treatment / comparator")
        ax.set_title(f"{canary} canary", fontsize=10)
        ax.grid(alpha=0.3)
        if missing:
            ax.text(0.01, 0.01, "no freed estimate: " + "; ".join(missing), transform=ax.transAxes, fontsize=7,
                    va="bottom")
    if not canaries:
        axes[0].text(0.5, 0.5, "no declared comparison", ha="center", transform=axes[0].transAxes)
    level = prim.get("level", 0.9875) * 100
    fig.suptitle(f"What each treatment bought and cost, per declared comparison ({level:.6g}% intervals; x secondary)\n"
                 "x: bg memory.current + zram pool, pressure-phase time average, comparator - treatment; "
                 "y: Table 4's p99 ratio" + tcg_note(cases), fontsize=10)
    place(fig, left=0.8, right=0.2, bottom=0.62, top=0.72 + (TCG_LINE if tcg_note(cases) else 0), wspace=0.9)
    save(fig, out, 120)
    plt.close(fig)


def p99_by_regime(cases, out):
    regimes = sorted(set(cases["regime"]))
    conf = np.array(cases["configuration"])
    reg = np.array(cases["regime"])
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=False)
    for ax, canary in zip(axes, ["compute", "sqlite"]):
        flagged_labelled = False
        p99 = cases[f"{canary}_p99_us"] / 1000.0
        width = 0.8 / len(CONFIGS)
        for j, c in enumerate(CONFIGS):  # one column per arm in each regime, one legend entry per arm
            labelled = False
            for i, r in enumerate(regimes):
                sel = (conf == c) & (reg == r) & np.isfinite(p99)
                x = i + (j - (len(CONFIGS) - 1) / 2) * width
                vals = p99[sel]
                if len(vals) == 0:
                    continue
                jitter = (np.linspace(-0.3, 0.3, len(vals)) if len(vals) > 1 else np.zeros(1)) * width
                flag = np.asarray(cases[f"{canary}_p99_flagged"])[sel]
                ax.scatter((x + jitter)[~flag], vals[~flag], s=12, color=COLORS[c], alpha=0.6, edgecolors="none")
                if flag.any():
                    ax.scatter((x + jitter)[flag], vals[flag], s=30, marker="^", facecolors="none",
                               edgecolors=COLORS[c], label="censored lower bound / imputed (lost)"
                               if not flagged_labelled else None)
                    flagged_labelled = True
                ax.hlines(np.median(vals), x - width * 0.45, x + width * 0.45, color=COLORS[c], lw=2.5,
                          label=None if labelled else c)
                labelled = True
        ax.set_xticks(range(len(regimes)))
        ax.set_xticklabels(regimes, rotation=15)
        # Linear axis from 0, so that bar heights compare as ratios (16 vs 29 ms is not 5x).
        fin = p99[np.isfinite(p99)]
        ax.set_ylim(0, float(fin.max()) * 1.1 if len(fin) else 1.0)
        ax.set_ylabel("pressure-phase p99 response (ms)")
        ax.set_title(f"{canary} canary: per-case p99 (dots) and median (bar)", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("p99 by regime and arm (unpaired, descriptive)" + tcg_note(cases), fontsize=11)
    place(fig, left=0.72, right=0.15, bottom=0.67, top=0.65 + (TCG_LINE if tcg_note(cases) else 0), wspace=0.7)
    save(fig, out, 130)
    plt.close(fig)


def timeseries(db, case_id, out):
    ts = ha.case_timeseries(db, case_id)
    tel, can = ts["telemetry"], ts["canaries"]
    t = tel["t_s"]
    fig, axes = plt.subplots(4, 1, figsize=(10, 9.5), sharex=True)

    def mark(ax):
        for name, (a, b) in ts["phases"].items():
            if name == "pressure":
                ax.axvspan(a, b, color="#F2C14E", alpha=0.15, lw=0)
        for te, kind in ts["events"]:
            if kind in ("trigger", "would_trigger"):
                ax.axvline(te, color="#C44E52", ls="--", lw=1.2)
            elif kind == "backend_on":
                ax.axvline(te, color="#8172B2", ls="--", lw=1.2)
        for a, b, req, err, ach in ts["reclaim_actions"]:
            ax.axvspan(a, max(b, a + 0.3), color="#55A868", alpha=0.5, lw=0)

    ax = axes[0]
    for col, lab, st in [("bg_some_us", "bg some", "-"), ("bg_full_us", "bg full", "--"), ("fg_some_us", "fg some", ":")]:
        v = tel[col]
        if np.isfinite(v).sum() > 1:
            ax.plot(t[1:], np.diff(v) / 1000.0, st, label=lab)
    ax.set_ylabel("PSI stall per 1 s\nsample (ms)")
    ax.legend(fontsize=8, loc="upper left")
    ax = axes[1]
    for col, lab in [("bg_current_bytes", "bg memory.current"), ("fg_current_bytes", "fg memory.current"),
                     ("bg_swap_current_bytes", "bg memory.swap.current")]:
        v = tel[col]
        if np.isfinite(v).any():
            ax.plot(t, v / 2**20, label=lab)
    ax.set_ylabel("MiB")
    ax.legend(fontsize=8, loc="upper left")
    ax = axes[2]
    for col, lab in [("zram_orig_data_bytes", "zram orig_data"), ("zram_compr_data_bytes", "zram compr_data"),
                     ("zram_mem_used_bytes", "zram mem_used")]:
        v = tel[col]
        if np.isfinite(v).any():
            ax.plot(t, v / 2**20, label=lab)
    v = tel["swapfile_used_kib"]
    if np.isfinite(v).any():
        ax.plot(t, v / 1024.0, label="swapfile used")
    ax.set_ylabel("MiB")
    ax.legend(fontsize=8, loc="upper left")
    ax = axes[3]
    for name, color in [("compute", "#4C72B0"), ("sqlite", "#DD8452")]:
        s, r, cens = can[name]["scheduled_s"], can[name]["response_us"], np.asarray(can[name]["censored"], bool)
        if len(s):
            ok = ~cens & np.isfinite(r)
            ax.scatter(s[ok], r[ok] / 1000.0, s=3, color=color, label=f"{name} response", alpha=0.6)
            c = cens & np.isfinite(r)
            if c.any():
                ax.scatter(s[c], r[c] / 1000.0, marker="^", facecolors="none", edgecolors="red",
                           label=f"{name} never completed (censored lower bound)")
    ax.set_yscale("log")
    ax.set_ylabel("response (ms)")
    ax.set_xlabel("time from pressure-phase start (s)")
    ax.legend(fontsize=8, loc="upper left", markerscale=3)
    for a in axes:
        mark(a)
        a.grid(alpha=0.3)
    note = " - TCG: timings inflated" if ts.get("accelerator") == "tcg" else ""
    fig.suptitle(f"{case_id} ({ts.get('configuration', '?')}, {ts.get('vm', '?')}, {ts.get('regime', '?')}){note}\n"
                 "yellow = pressure phase, red dashed = PSI trigger, green = memory.reclaim write, "
                 "purple dashed = backend enabled", fontsize=10)
    place(fig, left=0.8, right=0.15, bottom=0.59, top=0.61, hspace=0.26)
    save(fig, out, 120)
    plt.close(fig)


def zram_timecourse(db, cases, out):
    """zram_orig_data_bytes (MiB) vs time since pressure start (s), per configuration."""
    k = max(1, len(CONFIGS))
    fig, axes = plt.subplots(1, k, figsize=(13 * max(k, 3) / 3, 4), sharey=True, squeeze=False)
    axes = axes[0]
    ids, conf, status = cases["case_id"], cases["configuration"], cases["status"]
    grid = None
    for ax, c in zip(axes, CONFIGS):
        series = []
        # this configuration's completed cases, their telemetry only (no request rows), on one connection
        chosen = [cid for cid, k, st in zip(ids, conf, status) if k == c and st == "completed"]
        for t, z in ha.telemetry_column(db, chosen, "zram_orig_data_bytes"):
            ok = np.isfinite(z)
            if ok.sum() < 2:
                continue
            series.append((t[ok], z[ok] / 2**20))
        if series:  # every case thin, as one collection (one Line2D per case is slow to build and draw)
            ax.add_collection(LineCollection([np.column_stack(s) for s in series], colors=COLORS[c], linewidths=0.6,
                                             alpha=0.25, zorder=2))  # zorder of a Line2D: above the grid
            lo = min(s[0][0] for s in series)
            hi = max(s[0][-1] for s in series)
            grid = np.arange(np.floor(lo), np.ceil(hi) + 1, 1.0)
            m = np.array([np.interp(grid, s[0], s[1], left=np.nan, right=np.nan) for s in series])
            with np.errstate(all="ignore"):
                ok = np.isfinite(m).sum(axis=0) > 0
                med = np.full(grid.shape, np.nan)
                med[ok] = np.nanmedian(m[:, ok], axis=0)
            ax.plot(grid, med, color=COLORS[c], lw=2.5, label=f"median of {len(series)} cases")
        sel = (np.array(conf) == c) & np.isfinite(cases["trigger_delay_s"])
        if sel.any():
            ax.axvline(np.median(cases["trigger_delay_s"][sel]), color="#C44E52", ls="--", lw=1.2,
                       label="median trigger")
        ax.axvline(0.0, color="0.3", lw=0.8)
        ax.set_title(c, fontsize=10)
        ax.set_xlabel("time since pressure-phase start (s)")
        ax.grid(alpha=0.3)
        if series or sel.any():
            ax.legend(fontsize=8, loc="upper left")
    axes[0].set_ylabel("zram orig_data (MiB)")
    fig.suptitle("zram occupancy (mm_stat orig_data_size; includes the 4 KiB swap header once prepared)"
                 + tcg_note(cases), fontsize=11)
    place(fig, left=0.8, right=0.15, bottom=0.59, top=0.66 + (TCG_LINE if tcg_note(cases) else 0), wspace=0.2)
    save(fig, out, 120)
    plt.close(fig)


def reclaim_execution(cases, out):
    """Trigger delay per configuration; bounded-reclaim write duration and achieved / requested."""
    conf = np.array(cases["configuration"])
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    ax = axes[0]
    for i, c in enumerate(CONFIGS):
        v = cases["trigger_delay_s"][(conf == c) & np.isfinite(cases["trigger_delay_s"])]
        if len(v):
            x = i + (np.linspace(-0.2, 0.2, len(v)) if len(v) > 1 else np.zeros(1))
            ax.scatter(x, v, s=14, color=COLORS[c], alpha=0.7)
            ax.hlines(np.median(v), i - 0.3, i + 0.3, color=COLORS[c], lw=2.5)
        else:
            ax.text(i, 0.5, "not measured", ha="center", transform=ax.get_xaxis_transform(), fontsize=8)
    ax.set_xticks(range(len(CONFIGS)))
    ax.set_xticklabels(CONFIGS, rotation=10 if len(CONFIGS) <= 3 else 30, fontsize=8)
    ax.set_ylabel("trigger delay since pressure start (s)")
    ax.set_title("PSI trigger (static: would_trigger)", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    writers = reclaim_writers(cases)
    what = writers[0] if len(writers) == 1 else "memory.reclaim-writing arm"
    wcolor = COLORS[writers[0]] if writers else PALETTE[2]
    rec = np.isin(conf, writers)
    dur = cases["reclaim_duration_ms"][rec]
    ax = axes[1]
    ok = np.isfinite(dur)
    if ok.any():
        ax.scatter(np.arange(len(dur))[ok], dur[ok], s=16, color=wcolor, label="write")
        ax.axhline(1000.0, color="#C44E52", ls=":", lw=1.2, label="1 s (pilot limit)")
        ax.set_ylim(0, max(1100.0, float(np.max(dur[ok])) * 1.1))
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "no memory.reclaim write", ha="center", transform=ax.transAxes)
    ax.set_xlabel(f"{what} case")
    ax.set_ylabel("memory.reclaim write duration (ms)")
    ax.set_title(f"{', '.join(writers) if writers else 'memory.reclaim'}: write duration", fontsize=10)
    ax.grid(alpha=0.3)
    ax = axes[2]
    a, k = cases["reclaim_achieved_ratio"][rec], cases["reclaim_conservative_ratio"][rec]
    n = np.arange(len(a))
    if np.isfinite(a).any():
        ax.scatter(n, a, s=16, color=wcolor, label="across the write")
    if np.isfinite(k).any():
        ax.scatter(n, k, s=16, marker="v", color="0.3", label="conservative (minus concurrent estimate)")
        both = np.isfinite(a) & np.isfinite(k)
        if both.any():  # one collection for every case's connector (one Line2D each is slow to draw)
            ax.vlines(n[both], k[both], a[both], color="0.6", lw=0.8)
    else:
        ax.text(0.5, 0.05, "conservative: not measured", ha="center", transform=ax.transAxes, fontsize=8)
    ax.axhline(1.0, color="0.3", lw=1)
    ax.axhline(0.8, color="#C44E52", ls=":", lw=1.2, label="0.8 (pilot rule)")
    ax.set_xlabel(f"{what} case")
    ax.set_ylabel("achieved / requested (unclipped)")
    ax.set_title("achieved reclaim", fontsize=10)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.suptitle("Reclaim execution (secondary)" + tcg_note(cases), fontsize=11)
    place(fig, left=0.84, right=0.15, bottom=0.59, top=0.65 + (TCG_LINE if tcg_note(cases) else 0), wspace=0.9)
    save(fig, out, 120)
    plt.close(fig)


def run_parallel(jobs, workers):
    """Runs the figure jobs in `workers` processes (fork after the data are loaded: each draws into
    its own PNGs, nothing returns). The jobs are taken in order from a shared queue (a pipe holding
    their indices), so a process that finishes early takes the next one; list the costliest first.
    A failing job fails the whole run."""
    if workers <= 1 or len(jobs) <= 1:
        for job in jobs:
            job()
        return
    r, w = os.pipe()
    os.write(w, bytes(range(len(jobs))))  # < 256 jobs: far below the pipe's capacity
    os.close(w)

    def drain():
        while True:
            b = os.read(r, 1)  # one index at a time (a read of 1 byte is atomic)
            if not b:
                return
            jobs[b[0]]()

    sys.stdout.flush()
    sys.stderr.flush()
    pids = []
    for _ in range(workers - 1):
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                drain()
            except BaseException:  # noqa: BLE001 - reported, then the exit status says it failed
                traceback.print_exc()
                code = 1
            sys.stderr.flush()
            os._exit(code)
        pids.append(pid)
    drain()
    os.close(r)
    failed = [pid for pid in pids if os.waitpid(pid, 0)[1] != 0]
    if failed:
        sys.exit(f"figures.py: {len(failed)} figure worker(s) failed (traceback above)")


def read_handoff():
    """The hand-off line of --handoff-stdin; None at end of file (the caller gave up)."""
    line = sys.stdin.readline()
    if not line.strip():
        return None
    return json.loads(line)


TEXT_COLUMNS = {"case_id", "vm", "regime", "configuration", "triplet_id", "accelerator", "status"}


def cases_from_json(path):
    """The per-case columns as load_campaign()["cases"] gives them: text columns as lists, the
    others as numpy arrays (JSON null = NaN; the flag columns boolean)."""
    with open(path) as f:
        cols = json.load(f)
    out = {}
    for k, v in cols.items():
        if k in TEXT_COLUMNS:
            out[k] = v
        elif v and isinstance(v[0], bool):
            out[k] = np.array(v, dtype=bool)
        else:
            out[k] = np.array([math.nan if x is None else x for x in v], dtype=float)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--replicates", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--case", help="case for the time-series figure (default: the first completed case of an arm "
                                   "that writes memory.reclaim)")
    ap.add_argument("--jobs", type=int, default=2, help="figure processes (at most the usable cores)")
    ap.add_argument("--primary-json", help="primary result computed by `harness analyze` (skips the bootstrap here)")
    ap.add_argument("--cases-json", help="per-case columns loaded by `harness analyze` (skips reading every request)")
    ap.add_argument("--handoff-stdin", action="store_true",
                    help="wait for the hand-off line on stdin (started by `harness analyze` before its data exist)")
    a = ap.parse_args()
    if a.handoff_stdin:
        handoff = read_handoff()
        if handoff is None:
            return
        a.primary_json, a.cases_json = handoff["primary_json"], handoff["cases_json"]
    os.makedirs(a.out, exist_ok=True)
    global SYNTHETIC
    SYNTHETIC = ha.synthetic_banner(a.db)
    cases = cases_from_json(a.cases_json) if a.cases_json else ha.load_campaign(a.db)["cases"]
    if a.primary_json:
        with open(a.primary_json) as f:
            prim = json.load(f)
        for c in prim["comparisons"]:  # JSON null = NaN (an interval the design cannot give)
            for k, v in c.items():
                if v is None:
                    c[k] = math.nan
        for p in prim.get("tradeoff") or []:  # an interval without a freed estimate stays None (listed)
            for k in ("ratio", "ratio_lower", "ratio_upper"):
                if p[k] is None:
                    p[k] = math.nan
    else:
        prim = ha.primary(a.db, replicates=a.replicates, seed=a.seed)
    arms = prim.get("arms") or []
    if not arms:  # an older primary JSON: the configurations of the cases, in their first order
        arms = list(dict.fromkeys(cases["configuration"]))
    set_arms(arms)
    case = a.case
    if case is None:
        writers = reclaim_writers(cases)
        reclaim = [c for c, k, st in zip(cases["case_id"], cases["configuration"], cases["status"])
                   if k in writers and st == "completed"]
        case = reclaim[0] if reclaim else cases["case_id"][0]
    # Costliest first (the workers take them in this order; CPU on the 180-case benchmark DB, one
    # process: time series 0.29 s, it draws every request of one case and a log axis; zram time
    # course 0.22 s, every case's telemetry; reclaim execution 0.21 s; p99 0.15 s; forest 0.08 s).
    jobs = [lambda: timeseries(a.db, case, os.path.join(a.out, f"timeseries_{case}.png")),
            lambda: zram_timecourse(a.db, cases, os.path.join(a.out, "zram_timecourse.png")),
            lambda: reclaim_execution(cases, os.path.join(a.out, "reclaim_execution.png")),
            lambda: p99_by_regime(cases, os.path.join(a.out, "p99_by_regime.png")),
            lambda: forest(prim, cases, os.path.join(a.out, "forest.png"))]
    if prim.get("tradeoff"):
        jobs.append(lambda: tradeoff(prim, cases, os.path.join(a.out, "tradeoff.png")))
    run_parallel(jobs, min(a.jobs, len(os.sched_getaffinity(0))))
    print(f"figures.py: wrote forest.png, p99_by_regime.png, timeseries_{case}.png, zram_timecourse.png, "
          f"reclaim_execution.png{', tradeoff.png' if prim.get('tradeoff') else ''} to {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
