#!/usr/bin/python3
"""Sums a log of tests/bench/compile/cpu_launcher.sh per kind of output.

usage: compile_cpu.py BUILD_DIR LOG [LOG...]

Each log line is "<user s> <sys s> <wall s> <output>" (one compile or link). An output
belongs to the target whose "<target>.dir" folder it is in; the target's folder under
BUILD_DIR says its kind: tests/ (test and bench objects) or the product (everything else).
Prints CPU seconds (user + sys) of compiling and of linking, per kind, and the 15 targets
whose objects took the most CPU.
"""
import collections
import os
import re
import sys


def target_kinds(build):
    kinds = {}
    for top, dirs, _ in os.walk(build):
        for d in dirs:
            if d.endswith(".dir") and os.path.basename(top) == "CMakeFiles":
                rel = os.path.relpath(top, build)
                kinds[d[:-4]] = "tests" if rel.startswith("tests") else "product"
    return kinds


def main():
    build, logs = sys.argv[1], sys.argv[2:]
    kinds = target_kinds(build)
    cpu = collections.Counter()
    per_target = collections.Counter()
    count = collections.Counter()
    for log in logs:
        for line in open(log):
            parts = line.split(maxsplit=3)
            if len(parts) < 4 or not re.match(r"^[0-9.]+$", parts[0]):
                continue  # "Command exited with non-zero status" lines of /usr/bin/time
            user, sys_, _, out = float(parts[0]), float(parts[1]), float(parts[2]), parts[3].strip()
            m = re.search(r"([^/]+)\.dir/", out)
            target = m.group(1) if m else os.path.basename(out)
            kind = kinds.get(target, "tests" if "/tests/" in out else "product")
            step = "compile" if out.endswith(".o") else "link"
            cpu[(kind, step)] += user + sys_
            count[(kind, step)] += 1
            if step == "compile":
                per_target[target] += user + sys_
    total = sum(v for (k, s), v in cpu.items() if s == "compile")
    for (kind, step), v in sorted(cpu.items()):
        print(f"{kind:8} {step:8} {v:8.0f} CPU-s in {count[(kind, step)]:4} commands")
    print(f"compiling in all {total:.0f} CPU-s")
    print("heaviest targets (compile CPU-s):")
    for t, v in per_target.most_common(15):
        print(f"  {v:7.0f}  {t}")


if __name__ == "__main__":
    main()
