"""The capture file of docs/capture-format.md written with h5py, and the gap detector of
src/capture/gaps.ts: the Python capture runners' storage (capture_driver.py).

Updates wait in per-PV column buffers; flush() writes each as one block per dataset (resize,
then a write of the new rows), flushes the file and puts HDF5's writes on disk in a safe order
with fsyncs (capture_ordered.py)."""

from __future__ import annotations

import json
import threading
from array import array
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Union, cast

import h5py
import numpy as np
from h5py import h5s

from .capture_ordered import OrderedFile

if TYPE_CHECKING:
    import numpy.typing as npt

    # An update's value: a number, or an array as the client library gives it (a list, numpy).
    ArrayValue = Union[Sequence[float], npt.NDArray[Any]]
    Value = Union[float, ArrayValue]

# A gap in a checked PV's updates: (row, value before, value after, updates lost).
Gap = tuple[int, float, float, float]

FORMAT_NAME = "epicsperf-capture"
FORMAT_VERSION = 1
ROW_CHUNK = 1024
ARRAY_CHUNK_BYTES = 512 * 1024
DTYPES = {"char": "u1", "short": "<i2", "enum": "<u2", "long": "<i4", "float": "<f4", "double": "<f8"}
ROW_BYTES = 8 + 8 + 1 + 2


class CaptureExists(Exception):
    pass


def group_name(pv: str) -> str:
    return "%2E" if pv == "." else pv.replace("%", "%25").replace("/", "%2F")


class GapDetector:
    """Counters that step by exactly 1, arrays whose every element is the update number."""

    def __init__(self) -> None:
        self.last: float | None = None

    def observe(self, index: int, value: Value) -> Gap | None:
        if isinstance(value, (int, float)):
            v = float(value)
        else:
            if len(value) == 0:
                return None
            v = float(value[0])
        before, self.last = self.last, v
        if before is None or v == before + 1:
            return None
        return (index, before, v, v - before - 1)


class Pv:
    def __init__(self, name: str, index: int, native_type: str, count: int, layout: str, group: Any) -> None:
        self.name, self.index, self.type, self.count, self.layout = name, index, native_type, count, layout
        self.group = group
        self.dtype = np.dtype(DTYPES[native_type])
        self.values: list[Value] = []  # scalars: floats; arrays: numpy arrays
        self.timestamp = array("d")
        self.received = array("d")
        self.severity = array("B")
        self.status = array("H")
        self.gap_rows: list[Gap] = []
        self.rows = 0
        self.elements = 0
        self.ds: dict[str, Any] = {name: group[name] for name in group}


def append_block(ds: Any, rows: npt.ArrayLike) -> None:
    """Grow `ds` along its first axis by `rows` and write them there, through h5py's low-level
    calls: its Dataset.resize and slicing cost about a millisecond a call, which over six
    datasets of 1000 PVs was most of a flush."""
    rows = np.ascontiguousarray(rows, dtype=ds.dtype)
    dsid = ds.id
    space = dsid.get_space()
    shape = space.shape
    n = shape[0]
    dsid.set_extent((n + len(rows),) + shape[1:])
    space = dsid.get_space()
    space.select_hyperslab((n,) + (0,) * (rows.ndim - 1), rows.shape)
    dsid.write(h5s.create_simple(rows.shape), space, rows)


class CaptureFile:
    def __init__(self, path: str, force: bool, tool_version: str, options: object, environment: object, created: str,
                 fsync: bool = True) -> None:
        self.path = path
        self.fsync = fsync
        try:
            self.file = OrderedFile(path, force)
        except FileExistsError:
            raise CaptureExists(f"{path} exists (use --force to replace it)") from None
        self.f = h5py.File(self.file, "w", libver=("v108", "v108"))
        self.f.attrs.update(format=FORMAT_NAME, format_version=np.uint32(FORMAT_VERSION), tool="epicsperf",
                            tool_version=tool_version, created=created,
                            options=json.dumps(options, separators=(",", ":")),
                            environment=json.dumps(environment, separators=(",", ":")))
        self.pvs_group = self.f.create_group("pvs")
        self.pvs: list[Pv] = []
        self.lock = threading.Lock()
        self.flush()

    def add_pv(self, name: str, native_type: str, count: int, varying: bool = False, units: str | None = None,
               precision: int | None = None, enum_strings: Iterable[str] | None = None) -> Pv:
        layout = "varying" if varying else "scalar" if count == 1 else "fixed"
        index = len(self.pvs)
        g = self.pvs_group.create_group(group_name(name))
        g.attrs.update(name=name, index=np.uint32(index), native_type=native_type, count=np.uint32(count),
                       layout=layout)
        if units is not None:
            g.attrs["units"] = units
        if precision is not None:
            g.attrs["precision"] = np.int16(precision)
        if enum_strings:
            g.attrs["enum_strings"] = list(enum_strings)
        dtype = np.dtype(DTYPES[native_type])
        rows = dict(maxshape=(None,), chunks=(ROW_CHUNK,))
        if layout == "fixed":
            r = max(1, min(ROW_CHUNK, ARRAY_CHUNK_BYTES // (count * dtype.itemsize)))
            g.create_dataset("value", (0, count), dtype, maxshape=(None, count), chunks=(r, count))
        elif layout == "varying":
            chunk = max(1, ARRAY_CHUNK_BYTES // dtype.itemsize)
            g.create_dataset("value", (0,), dtype, maxshape=(None,), chunks=(chunk,))
            g.create_dataset("offset", (0,), "<u8", **rows)
            g.create_dataset("length", (0,), "<u4", **rows)
        else:
            g.create_dataset("value", (0,), dtype, **rows)
        for n, t in (("timestamp", "<f8"), ("received", "<f8"), ("severity", "u1"), ("status", "<u2")):
            g.create_dataset(n, (0,), t, **rows)
        g.create_dataset("gaps", (0, 4), "<f8", maxshape=(None, 4), chunks=(256, 4))
        g["gaps"].attrs["columns"] = ["index", "before", "after", "lost"]
        pv = Pv(name, index, native_type, count, layout, g)
        self.pvs.append(pv)
        return pv

    def append(self, pv: Pv, value: Value, timestamp: float, received: float, severity: int, status: int) -> int:
        """Buffer one update (called from the client's callbacks); returns its row."""
        with self.lock:
            pv.values.append(value)
            pv.timestamp.append(timestamp)
            pv.received.append(received)
            pv.severity.append(severity)
            pv.status.append(status)
            return pv.rows + len(pv.timestamp) - 1

    def append_gap(self, pv: Pv, gap: Gap) -> None:
        with self.lock:
            pv.gap_rows.append(gap)

    def flush(self) -> tuple[int, int]:
        """Write every PV's buffer as one block per dataset, flush and fsync; (updates, bytes).
        A write that fails (a full disk) raises its OSError; the file stays as the last flush left it."""
        try:
            return self._flush()
        except Exception:
            if self.file.failure is not None:
                raise self.file.failure from None
            raise

    def _flush(self) -> tuple[int, int]:
        updates = nbytes = 0
        for pv in self.pvs:
            with self.lock:  # take the buffers; callbacks go on filling new ones
                values, ts, rx = pv.values, pv.timestamp, pv.received
                sev, st, gaps = pv.severity, pv.status, pv.gap_rows
                pv.values, pv.timestamp, pv.received = [], array("d"), array("d")
                pv.severity, pv.status, pv.gap_rows = array("B"), array("H"), []
            n = len(ts)
            if n:
                d = pv.ds
                if pv.layout == "scalar":
                    block = np.asarray(values, dtype=pv.dtype)
                    append_block(d["value"], block)
                elif pv.layout == "fixed":
                    block = np.asarray(values, dtype=pv.dtype).reshape(n, pv.count)
                    append_block(d["value"], block)
                else:
                    arrays = cast("list[ArrayValue]", values)  # a varying PV's values are arrays
                    lengths = np.fromiter((len(v) for v in arrays), dtype="<u4", count=n)
                    offsets = pv.elements + np.concatenate(([0], np.cumsum(lengths, dtype="<u8")[:-1])).astype("<u8")
                    if lengths.sum():
                        block = np.concatenate([np.asarray(v, dtype=pv.dtype) for v in values])
                    else:
                        block = np.zeros(0, pv.dtype)
                    if len(block):
                        append_block(d["value"], block)
                    append_block(d["offset"], offsets)
                    append_block(d["length"], lengths)
                    pv.elements += len(block)
                    nbytes += 12 * n
                append_block(d["timestamp"], np.frombuffer(ts, dtype="<f8"))
                append_block(d["received"], np.frombuffer(rx, dtype="<f8"))
                append_block(d["severity"], np.frombuffer(sev, dtype="u1"))
                append_block(d["status"], np.frombuffer(st, dtype="<u2"))
                pv.rows += n
                updates += n
                nbytes += block.nbytes + ROW_BYTES * n
            if gaps:
                append_block(pv.ds["gaps"], np.asarray(gaps, dtype="<f8"))
        self.f.flush()
        self.file.commit(self.fsync)
        return updates, nbytes

    def close(self) -> None:
        """Flush what is buffered and close the file (after a failed write, only close it)."""
        try:
            if self.file.failure is None:
                self.flush()
        finally:
            self.close_file()

    def close_file(self) -> None:
        """Close h5py's file and commit what it wrote on closing, unless a write failed: then
        the file stays as the last good flush left it."""
        try:
            if self.f.id.valid:
                self.f.close()
            if self.file.failure is None:
                self.file.commit(self.fsync)
        finally:
            self.file.close()
