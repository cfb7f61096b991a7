"""Write throughput of the Python capture writers' file (epicsperf_runners/capture_file.py, h5py
through capture_ordered.py): 1000 counter PVs, 10 updates each a flush, and one PV of 1M-double
arrays, 10 updates (80 MB) a flush, each flush fsynced; MB/s and the flush's mean and maximum.

    PYTHONPATH=packages/epicsperf/python $EPICSPERF_HOME/venv-*/bin/python benchmarks/capture-writer.py [dir]

(PYTHONPATH names the python/ folder whose package is measured.)
"""
import os
import sys
import tempfile
import time

import numpy as np
from epicsperf_runners import capture_file


def run(label, pvs, count, per_flush, flushes, path):
    cf = capture_file.CaptureFile(path, True, "bench", {}, {}, "now")
    ids = [cf.add_pv("BENCH:PV%d" % i, "double", count) for i in range(pvs)]
    cf.flush()
    arr = np.zeros(count) if count > 1 else None
    k, flush_s, max_s = 0, 0.0, 0.0
    t0 = time.perf_counter()
    for _ in range(flushes):
        for u in range(per_flush):
            k += 1
            cf.append(ids[u % pvs], arr if arr is not None else float(k), k, k, 0, 0)
        t = time.perf_counter()
        cf.flush()
        d = time.perf_counter() - t
        flush_s += d
        max_s = max(max_s, d)
    total = time.perf_counter() - t0
    cf.close()
    mb = os.path.getsize(path) / 1e6
    os.remove(path)
    print(f"{label}  |  {k} updates  |  {mb:.1f} MB  |  total {mb / total:.1f} MB/s  |  flush only {mb / flush_s:.1f} MB/s"
          f"  |  flush mean {flush_s / flushes * 1000:.0f} ms, max {max_s * 1000:.0f} ms")


with tempfile.TemporaryDirectory(prefix="epicsperf-capture-bench-py-", dir=sys.argv[1] if len(sys.argv) > 1 else None) as d:
    run("counters-1000pv-10Hz-fsync", 1000, 1, 10_000, 8, os.path.join(d, "scalars.h5"))
    run("array-1M-double-fsync", 1, 1_000_000, 10, 6, os.path.join(d, "array.h5"))
