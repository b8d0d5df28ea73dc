#!/usr/bin/python3
"""Campaign overhead per case, from the timestamps a campaign DB already holds.

Per case (completed attempts, in execution order per host):
  phases      warmup start -> recovery end (guest CLOCK_MONOTONIC, table phases)
  restoration restoration start -> end (table phases/restoration)
  setup+fin   executor wall (cases.started/ended_unix_ns, guest clock) - phases - restoration:
              spec checks, cgroups, backend, canary DB build, bundle writing
  boot+xfer   attempt wall (attempts.started/ended_unix_ns, host clock: fresh-guest reboot,
              submit, polling, bundle download) - executor wall
    boot      of which: attempt start (host) -> executor start (guest wall clock): reboot,
              agent ready, submit (cross-clock: off by the guest's clock offset, about 1 s)
    xfer      of which: executor end (guest) -> bundle downloaded (host): poll latency and the
              bundle transfer (cross-clock, as boot)
  import      end of this attempt -> start of the host's next attempt (the import transaction and
              bookkeeping; the last case: -> end of `harness run`, which includes `vm down`)
Each difference uses one clock on each side, so host/guest clock offsets cancel.
Campaign-level: start of `harness run` -> first attempt (vm up, qualification, preflight).

Extrapolation to the study's phases (2 + 5 + 2 min = 540 s): boot+xfer, setup+fin and
restoration are taken as fixed per case (the fresh-guest reboot dominates boot+xfer; the bundle
download inside it is not separated); the import grows with the canary records, i.e. with phase
time, so it is scaled by 540 / phases. Overhead fraction = overhead / (overhead + 540 s). The
records per case are printed so the scaling can be judged.

Also per case: boot-to-ready, the engine's figure for the fresh boot (attempts.detail_json
boot.boot_to_ready_s: boot started -> agent answering), "-" when the case had no fresh boot.

Usage: overhead_table.py DB [--run-start-ns NS --run-end-ns NS] [--study-phases-s 540] [--json FILE]
  --json FILE also writes the means (seconds per case) and the run's wall time there, for
  run_engine_bench.sh's side-by-side table.
"""
import argparse
import json
import math
import sqlite3
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    ap.add_argument("--run-start-ns", type=int, help="host unix ns when `harness run` started")
    ap.add_argument("--run-end-ns", type=int, help="host unix ns when `harness run` ended")
    ap.add_argument("--study-phases-s", type=float, default=540.0)
    ap.add_argument("--json", help="also write the means and the run's wall time (JSON) to this file")
    a = ap.parse_args()
    con = sqlite3.connect(f"file:{a.db}?mode=ro", uri=True)
    rows = con.execute(
        "SELECT a.case_id, a.attempt, a.host, a.started_unix_ns, a.ended_unix_ns, c.started_unix_ns, "
        "c.ended_unix_ns, c.configuration, c.accelerator, "
        "(SELECT start_ns FROM phases p WHERE p.case_id = c.case_id AND phase = 'warmup'), "
        "(SELECT end_ns FROM phases p WHERE p.case_id = c.case_id AND phase = 'recovery'), "
        "(SELECT end_ns - start_ns FROM restoration r WHERE r.case_id = c.case_id), "
        "(SELECT count(*) FROM canary_requests q WHERE q.case_id = c.case_id), "
        "json_extract(a.detail_json, '$.boot.boot_to_ready_s') "
        "FROM attempts a JOIN cases c ON c.case_id = a.case_id AND c.attempt = a.attempt "
        "WHERE a.status = 'completed' AND a.kind = 'run' ORDER BY a.host, a.started_unix_ns").fetchall()
    if not rows:
        sys.exit(f"{a.db}: no completed attempt with its case row (nothing to measure)")
    starts_by_host = {}
    for r in rows:
        starts_by_host.setdefault(r[2], []).append(r[3])
    all_attempts = con.execute("SELECT host, started_unix_ns FROM attempts WHERE started_unix_ns IS NOT NULL").fetchall()
    for host, s in all_attempts:
        starts_by_host.setdefault(host, []).append(s)
    for v in starts_by_host.values():
        v.sort()

    print(f"| case | config | accel | records | phases s | restoration s | setup+fin s | boot+xfer s | (boot | xfer) "
          f"| boot-to-ready s | import s | wall s | overhead % |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    tot = {"phases": 0.0, "rest": 0.0, "setup": 0.0, "bootx": 0.0, "boot": 0.0, "xfer": 0.0, "imp": 0.0, "wall": 0.0}
    n = 0
    accels = set()
    ready = []
    for (case_id, att, host, a0, a1, c0, c1, conf, accel, w0, r1, rest_ns, records, btr) in rows:
        if None in (a0, a1, c0, c1, w0, r1):
            print(f"| {case_id} | {conf} | {accel} | {records} | (timestamps missing) ||||||||")
            continue
        phases = (r1 - w0) / 1e9
        rest = (rest_ns or 0) / 1e9
        execw = (c1 - c0) / 1e9
        setup = execw - phases - rest
        bootx = (a1 - a0) / 1e9 - execw
        boot = (c0 - a0) / 1e9
        xfer = (a1 - c1) / 1e9
        later = [s for s in starts_by_host[host] if s > a1]
        nxt = later[0] if later else a.run_end_ns
        imp = (nxt - a1) / 1e9 if nxt else float("nan")
        wall = (a1 - a0) / 1e9 + (imp if imp == imp else 0.0)
        over = wall - phases
        btr_text = "-" if btr is None else f"{btr:.1f}"
        if btr is not None:
            ready.append(btr)
        print(f"| {case_id} | {conf} | {accel} | {records} | {phases:.1f} | {rest:.1f} | {setup:.1f} | {bootx:.1f} "
              f"| ({boot:.1f} | {xfer:.1f}) | {btr_text} | {imp:.1f} | {wall:.1f} | {100 * over / wall:.1f} |")
        for k, v in (("phases", phases), ("rest", rest), ("setup", setup), ("bootx", bootx), ("boot", boot),
                     ("xfer", xfer), ("imp", imp), ("wall", wall)):
            tot[k] += v if v == v else 0.0
        n += 1
        accels.add(accel)
    if n == 0:
        sys.exit("no case with all timestamps")
    m = {k: v / n for k, v in tot.items()}
    over = m["wall"] - m["phases"]
    print(f"| mean of {n} | | {','.join(sorted(accels))} | | {m['phases']:.1f} | {m['rest']:.1f} | {m['setup']:.1f} "
          f"| {m['bootx']:.1f} | ({m['boot']:.1f} | {m['xfer']:.1f}) "
          f"| {sum(ready) / len(ready) if ready else math.nan:.1f} | {m['imp']:.1f} | {m['wall']:.1f} "
          f"| {100 * over / m['wall']:.1f} |")
    print()
    first = min(r[3] for r in rows if r[3])
    if a.run_start_ns:
        print(f"campaign start (vm up, qualification, preflight) -> first case: {(first - a.run_start_ns) / 1e9:.1f} s")
    if a.run_start_ns and a.run_end_ns:
        print(f"`harness run` wall: {(a.run_end_ns - a.run_start_ns) / 1e9:.1f} s for {n} case(s)")
    if a.json:
        summary = {"cases": n, "accelerators": sorted(accels), "mean_s": m, "overhead_s": over,
                   "boot_to_ready_s": ready,
                   "run_wall_s": (a.run_end_ns - a.run_start_ns) / 1e9 if a.run_start_ns and a.run_end_ns else None,
                   "to_first_case_s": (first - a.run_start_ns) / 1e9 if a.run_start_ns else None}
        with open(a.json, "w") as f:
            json.dump(summary, f, indent=1)
    # Extrapolation (see the module docstring): fixed parts stay, the import scales with phase time.
    scale = a.study_phases_s / m["phases"]
    fixed = m["rest"] + m["setup"] + m["bootx"]
    prop = m["imp"] * scale
    over_study = fixed + prop
    print(f"study-length case ({a.study_phases_s:.0f} s of phases): overhead = restoration {m['rest']:.1f} + setup+fin "
          f"{m['setup']:.1f} + boot+xfer {m['bootx']:.1f} (fixed) + import {m['imp']:.1f} x {scale:.1f} (grows with "
          f"records) = {over_study:.1f} s per case -> overhead fraction {100 * over_study / (over_study + a.study_phases_s):.1f}%"
          f" (accelerator {','.join(sorted(accels))}); 5% of a study case allows "
          f"{0.05 / 0.95 * a.study_phases_s:.1f} s of overhead per case")


if __name__ == "__main__":
    main()
