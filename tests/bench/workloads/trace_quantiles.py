#!/usr/bin/python3
"""Independent reader of the canary trace format (canaries/TRACE.md, version 1) for the
benchmark: prints wake-delay p50/p99/max in microseconds, type 7 (numpy default)."""
import struct
import sys

import numpy as np


def read_trace(path):
    b = open(path, "rb").read()
    magic, version, rec_size = struct.unpack_from("<8sII", b, 0)
    assert magic == b"HKCTRACE" and version == 1 and rec_size == 64, (magic, version, rec_size)
    name = b[16:32].rstrip(b"\0").decode()
    period, origin, count, not_recorded = struct.unpack_from("<qqQQ", b, 32)
    assert len(b) == 64 + 64 * count + 8, "size"
    recs = [struct.unpack_from("<Qqqqqqqq", b, 64 + 64 * i) for i in range(count)]
    return name, period, origin, recs


if __name__ == "__main__":
    name, period, origin, recs = read_trace(sys.argv[1])
    wake = np.array([(r[2] - r[1]) / 1e3 for r in recs if r[3] != 0])
    sched_ok = all(r[1] == origin + r[0] * period for r in recs)
    print(f"{len(wake)} {np.percentile(wake, 50):.1f} {np.percentile(wake, 99):.1f} {wake.max():.1f} "
          f"{'schedule-fixed' if sched_ok else 'SCHEDULE-MOVED'}")
