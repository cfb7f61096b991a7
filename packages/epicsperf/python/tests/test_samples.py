"""The runner sample record (docs/runners.md): 32 little-endian bytes per sample, grouped by PV,
each PV's first counts[i] samples; numpy's packing and the struct one give the same bytes."""

import struct
from typing import TypedDict

from epicsperf_runners import samples


class Columns(TypedDict):
    severity: list[int]
    status: list[int]
    value: list[float]
    stamp: list[float]
    received: list[float]


def columns(counts: list[int], per_pv: int) -> Columns:
    n = len(counts) * per_pv
    return Columns(
        severity=[k % 4 for k in range(n)],
        status=[k % 22 for k in range(n)],
        value=[k * 1.5 - 3 for k in range(n)],
        stamp=[1.7e9 + k * 0.25 for k in range(n)],
        received=[1.7e9 + k * 0.25 + 0.0625 for k in range(n)],
    )


def test_records_are_32_bytes_grouped_by_pv_first_samples_only() -> None:
    counts, per_pv = [3, 0, 2], 4
    c = columns(counts, per_pv)
    data = samples.pack(counts, per_pv, **c)
    assert len(data) == 5 * samples.SAMPLE_BYTES == 160
    records = [struct.unpack_from("<Ihhddd", data, pos) for pos in range(0, len(data), 32)]
    assert [r[0] for r in records] == [0, 0, 0, 2, 2]
    # PV 2's first sample is column entry 2 * per_pv
    assert records[3] == (2, c["severity"][8], c["status"][8], c["value"][8], c["stamp"][8], c["received"][8])


def test_numpy_and_struct_packing_agree() -> None:
    counts, per_pv = [4, 1, 0, 3], 5
    c = columns(counts, per_pv)
    assert samples.pack(counts, per_pv, **c) == samples._pack_struct(counts, per_pv, **c)


def test_no_sample_is_no_byte() -> None:
    assert samples.pack([0, 0], 3, **columns([0, 0], 3)) == b""
