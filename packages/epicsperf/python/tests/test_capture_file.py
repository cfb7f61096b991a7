"""The Python runners' capture file (capture_file.py, docs/capture-format.md): the layouts, the
refusal of an existing file, group names, and the gap detector."""

from pathlib import Path

import h5py
import numpy as np
import pytest

from epicsperf_runners.capture_file import CaptureExists, CaptureFile, GapDetector, group_name


def test_gap_detector_counts_lost_updates_and_restarts() -> None:
    d = GapDetector()
    assert [d.observe(i, v) for i, v in enumerate([1, 2, 3])] == [None, None, None]
    assert d.observe(3, 6) == (3, 3.0, 6.0, 2.0)
    assert d.observe(4, 7) is None
    # an IOC restart: the counter went back, a negative loss
    assert d.observe(5, 1) == (5, 7.0, 1.0, -7.0)
    a = GapDetector()
    assert a.observe(0, np.full(4, 1.0)) is None
    assert a.observe(1, np.zeros(0)) is None  # an empty array says nothing
    assert a.observe(2, np.full(4, 3.0)) == (2, 1.0, 3.0, 1.0)


def test_group_names_escape_what_hdf5_paths_cannot_hold() -> None:
    assert group_name("A/B%C.") == "A%2FB%25C."
    assert group_name(".") == "%2E"
    assert group_name("TEST:CALC1") == "TEST:CALC1"


def write(path: Path, force: bool = False) -> None:
    f = CaptureFile(str(path), force, "0.1.0", {"flushMs": 1000}, {"python": "3"}, "2026-11-27T10:00:00Z", fsync=False)
    scalar = f.add_pv("TEST:CALC1", "double", 1, units="counts", precision=0)
    fixed = f.add_pv("TEST:ARRAY", "short", 3)
    varying = f.add_pv("TEST:DYN", "float", 10, varying=True)
    enum = f.add_pv("TEST:ENUM", "enum", 1, enum_strings=["Off", "On"])
    for k in range(3):
        f.append(scalar, k + 1.0, 100.0 + k, 100.5 + k, k % 4, k)
        f.append(fixed, [k, k, k], 200.0 + k, 200.5 + k, 0, 0)
        f.append(varying, [0.5] * k, 300.0 + k, 300.5 + k, 0, 0)
        if k == 1:
            f.flush()
    f.append(enum, 1, 400.0, 400.5, 0, 0)
    f.append_gap(scalar, (2, 1.0, 3.0, 1.0))
    f.close()


def test_layouts_dtypes_and_attributes_read_back_with_h5py(tmp_path: Path) -> None:
    path = tmp_path / "run.h5"
    write(path)
    with h5py.File(path, "r") as h:
        assert h.attrs["format"] == "epicsperf-capture"
        assert h.attrs["format_version"] == 1
        s = h["pvs/TEST:CALC1"]
        assert dict(s.attrs) == {"name": "TEST:CALC1", "index": 0, "native_type": "double", "count": 1,
                                 "layout": "scalar", "units": "counts", "precision": 0}
        assert s["value"][()].tolist() == [1.0, 2.0, 3.0]
        assert s["timestamp"][()].tolist() == [100.0, 101.0, 102.0]
        assert s["severity"].dtype == np.uint8 and s["status"].dtype == np.uint16
        assert s["gaps"][()].tolist() == [[2.0, 1.0, 3.0, 1.0]]
        f = h["pvs/TEST:ARRAY"]
        assert f.attrs["layout"] == "fixed" and f["value"].dtype == np.int16
        assert f["value"][()].tolist() == [[0, 0, 0], [1, 1, 1], [2, 2, 2]]
        v = h["pvs/TEST:DYN"]
        assert v.attrs["layout"] == "varying" and v["value"].dtype == np.float32
        assert v["length"][()].tolist() == [0, 1, 2]
        assert v["offset"][()].tolist() == [0, 0, 1]
        assert v["value"][()].tolist() == [0.5, 0.5, 0.5]
        assert list(h["pvs/TEST:ENUM"].attrs["enum_strings"]) == ["Off", "On"]


def test_an_existing_file_is_refused_unless_forced(tmp_path: Path) -> None:
    path = tmp_path / "run.h5"
    path.write_bytes(b"keep me")
    with pytest.raises(CaptureExists, match="exists"):
        write(path)
    assert path.read_bytes() == b"keep me"
    write(path, force=True)
    with h5py.File(path, "r") as h:
        assert len(h["pvs"]) == 4
