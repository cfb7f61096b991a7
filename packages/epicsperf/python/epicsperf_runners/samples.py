"""The runner sample record of docs/runners.md, packed here only: 32 bytes, little-endian:
PV index u32, severity i16, status i16, value f64, IOC time f64, receive time f64 (POSIX
seconds). src/bench/samples.ts decodes it (and writes it for the Node runners)."""

from __future__ import annotations

import struct
from collections.abc import Sequence

SAMPLE_BYTES = 32
RECORD = struct.Struct("<Ihhddd")
FIELDS = (("index", "<u4"), ("severity", "<i2"), ("status", "<i2"),
          ("value", "<f8"), ("stamp", "<f8"), ("received", "<f8"))


def pack(counts: Sequence[int], per_pv: int, severity: Sequence[int], status: Sequence[int], value: Sequence[float],
         stamp: Sequence[float], received: Sequence[float]) -> bytes:
    """The stored samples as records, grouped by PV. The columns are flat sequences of
    len(counts) * per_pv entries (PV i's k-th sample at i * per_pv + k), of which PV i
    filled its first counts[i]."""
    try:
        import numpy as np
    except ImportError:
        return _pack_struct(counts, per_pv, severity, status, value, stamp, received)
    counts_np = np.array(counts, dtype=np.int64)
    keep = (np.arange(per_pv)[None, :] < counts_np[:, None]).ravel()
    rec = np.zeros(int(counts_np.sum()), dtype=np.dtype(list(FIELDS)))
    rec["index"] = np.repeat(np.arange(len(counts), dtype=np.uint32), counts_np)
    for name, column, dtype in (("severity", severity, np.int16), ("status", status, np.int16),
                                ("value", value, np.float64), ("stamp", stamp, np.float64),
                                ("received", received, np.float64)):
        rec[name] = np.asarray(column, dtype=dtype)[keep]
    return rec.tobytes()


def _pack_struct(counts: Sequence[int], per_pv: int, severity: Sequence[int], status: Sequence[int],
                 value: Sequence[float], stamp: Sequence[float], received: Sequence[float]) -> bytes:
    out = bytearray(sum(counts) * SAMPLE_BYTES)
    pos = 0
    for i, n in enumerate(counts):
        for k in range(i * per_pv, i * per_pv + n):
            RECORD.pack_into(out, pos, i, severity[k], status[k], value[k], stamp[k], received[k])
            pos += SAMPLE_BYTES
    return bytes(out)
