#!/usr/bin/python3
"""The harness's footprint in guest cases (run_bench.sh): per executor, the process sampled from
outside every second beside its own outcome_json.harness_self; with two or more executors, their
figures side by side and as ratios over the first. Usage: footprint.py COLLECT_DIR CASE_ID EXE...
(collect dir: samples-EXE.txt, bundles/EXE/CASE_ID.db, clk_tck). Exits 1 when a case did not
complete or fewer than 2 outside samples were taken."""
import json
import sqlite3
import statistics
import sys

d, case_id, exes = sys.argv[1], sys.argv[2], sys.argv[3:]
hz = int(open(d + "/clk_tck").read().strip() or 100)
mib = lambda kib: kib / 1024


def report(exe):
    """Prints the table of one executor's case; returns its headline figures, or None."""
    rows = [[float(x) for x in l.split()] for l in open(f"{d}/samples-{exe}.txt") if len(l.split()) == 8]
    db = sqlite3.connect(f"{d}/bundles/{exe}/{case_id}.db")
    status, out = db.execute("SELECT status, outcome_json FROM cases").fetchone()
    hs = json.loads(out)["harness_self"]
    ticks = [r[0] for r in db.execute("SELECT t_ns FROM telemetry ORDER BY t_ns")]
    extra = [json.loads(r[0] or "{}") for r in db.execute("SELECT extra_json FROM telemetry")]
    print(f"\n## executor `{exe} case run`: case status {status}; {len(ticks)} telemetry samples")
    if len(rows) < 2 or status != "completed" or len(ticks) < 2:
        print("FAILED: too few outside samples or the case did not complete (exec.log, collect/case-EXE.stderr)")
        return None
    t_first, t_last = ticks[0] / 1e9, ticks[-1] / 1e9  # CLOCK_MONOTONIC = /proc/uptime here (no suspend)
    cpu = lambda r: (r[1] + r[2]) / hz
    start = min((r for r in rows if r[0] >= t_first), key=lambda r: r[0], default=rows[0])
    end = max((r for r in rows if r[0] <= t_last), key=lambda r: r[0], default=rows[-1])
    span = end[0] - start[0]
    per_s = (cpu(end) - cpu(start)) / span if span > 0 else float("nan")
    print("| figure | outside (/proc/<pid>, 1 s samples, 1/%d s ticks) | outcome_json.harness_self |" % hz)
    print("| --- | --- | --- |")
    print(f"| start-up CPU (process start .. first tick) | {cpu(start):.2f} s | - |")
    sc = hs.get("schedule") or {}
    if sc:
        print(f"| CPU over the measured phases | {cpu(end) - cpu(start):.3f} s over {span:.0f} s = {100 * per_s:.3f}% of the vCPU "
              f"({1000 * per_s:.2f} ms/s) | {sc['cpu_ns'] / 1e9:.3f} s over {sc['wall_ns'] / 1e9:.0f} s = "
              f"{100 * sc['vcpu_fraction']:.3f}% of the vCPU ({1e3 * sc['cpu_ns'] / sc['wall_ns']:.2f} ms/s) |")
        print(f"| of which telemetry sampling | - | {sc['telemetry_cpu_ns'] / 1e9:.3f} s "
              f"({sc['telemetry_cpu_ns'] / max(1, len(ticks)) / 1e6:.2f} ms/sample) |")
    print(f"| after the last tick (restoration, traces; until the last outside sample) | {cpu(rows[-1]) - cpu(end):.2f} s | - |")
    print(f"| whole case CPU | {cpu(rows[-1]):.2f} s (until the last outside sample) | {hs['cpu_ns'] / 1e9:.2f} s over "
          f"{hs['wall_ns'] / 1e9:.0f} s = {100 * hs['vcpu_fraction']:.2f}% |")
    at = max(rows, key=lambda r: r[3])
    print(f"| peak RSS | VmRSS max {mib(at[3]):.1f} MiB (anon {mib(at[5]):.1f}, file {mib(at[6]):.1f}, shmem: the binary in "
          f"the initramfs {mib(at[7]):.1f}), VmHWM {mib(rows[-1][4]):.1f} MiB | {mib(hs['peak_rss_kib']):.1f} MiB "
          f"(executor {hs['executor']}, agent {hs['agent']}) |")
    in_sched = [r for r in rows if t_first <= r[0] <= t_last]
    if in_sched:
        print(f"| RSS over the measured phases | max {mib(max(r[3] for r in in_sched)):.1f} MiB | - |")
    cpu_ns = sorted(e["sample_cpu_ns"] for e in extra if "sample_cpu_ns" in e)
    dur_ns = sorted(e["read_duration_ns"] for e in extra if "read_duration_ns" in e)
    if cpu_ns:
        q = lambda v, p: v[min(len(v) - 1, int(p * len(v)))]
        print(f"| one telemetry sample (in the guest) | - | thread CPU median {statistics.median(cpu_ns) / 1e3:.0f} us, "
              f"p90 {q(cpu_ns, 0.9) / 1e3:.0f} us; read_duration median {statistics.median(dur_ns) / 1e3:.0f} us |")
    return {"start-up CPU (s)": cpu(start),
            "CPU over the measured phases (% of the vCPU, harness_self)": 100 * sc["vcpu_fraction"] if sc else float("nan"),
            "peak RSS (MiB, VmHWM, harness_self)": mib(hs["peak_rss_kib"]),
            "peak VmRSS outside (MiB)": mib(at[3]),
            "of which shmem: mapped binary and libraries (MiB)": mib(at[7])}


figures = {exe: report(exe) for exe in exes}
if len(exes) > 1 and all(figures.values()):
    base = exes[0]
    print(f"\n## side by side (ratio: each over `{base}`)")
    print("| figure | " + " | ".join(f"`{e}`" for e in exes) + " | " +
          " | ".join(f"{e}/{base}" for e in exes[1:]) + " |")
    print("| --- |" + " --- |" * (2 * len(exes) - 1))
    for k in figures[base]:
        vals = [figures[e][k] for e in exes]
        ratios = [v / vals[0] if vals[0] else float("nan") for v in vals[1:]]
        print(f"| {k} | " + " | ".join(f"{v:.3f}" for v in vals) + " | " + " | ".join(f"{r:.2f}" for r in ratios) + " |")
sys.exit(0 if all(figures.values()) else 1)
