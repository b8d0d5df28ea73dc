#!/usr/bin/python3
"""p50/p99/max (us) from a cyclictest --histfile (1-us buckets): the smallest bucket whose
cumulative count reaches q * total (so resolution is 1 us)."""
import sys

counts, maxlat, overflows = {}, None, 0
for line in open(sys.argv[1]):
    if line.startswith("# Max Latencies:"):
        maxlat = int(line.split(":")[1].split()[0])
    elif line.startswith("# Histogram Overflows:"):
        overflows = int(line.split(":")[1].split()[0])
    elif not line.startswith("#") and line.strip():
        us, n = line.split()[:2]
        counts[int(us)] = int(n)
total = sum(counts.values()) + overflows


def q(p):
    acc = 0
    for us in sorted(counts):
        acc += counts[us]
        if acc >= p * total:
            return us
    return float("nan")


print(f"{total} {q(0.50)} {q(0.99)} {maxlat} overflows={overflows}")
