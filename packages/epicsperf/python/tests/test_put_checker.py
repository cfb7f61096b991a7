"""The IOC's check of the arrays clients put (array_stats.PutChecker): every element of put k is
k (wrapped to the element type), the waveform's length, one put after another."""

from types import SimpleNamespace

import numpy as np
import pytest

from epicsperf_runners.array_stats import PutChecker, Stats


def checker(elements: int = 4, array_type: str = "double") -> tuple[Stats, PutChecker]:
    stats = Stats()
    return stats, PutChecker(stats, SimpleNamespace(array_elements=elements, array_type=array_type))


def test_good_puts_are_counted_and_not_bad() -> None:
    stats, check = checker()
    for k in (1, 2, 3):
        check(np.full(4, float(k)))
    assert (stats.puts, stats.put_elements, stats.put_bad, stats.put_findings) == (3, 12, 0, [])


def test_a_wrong_element_a_wrong_length_and_a_skipped_put_are_findings() -> None:
    stats, check = checker()
    check(np.full(4, 1.0))
    check(np.array([2.0, 2.0, 9.0, 2.0]))
    check(np.full(3, 3.0))
    check(np.full(4, 5.0))
    assert stats.put_bad == 3
    assert "element 2 is 9.0, the first 2.0" in stats.put_findings[0]
    assert "3 elements, expected 4" in stats.put_findings[1]
    assert "came after 3" in stats.put_findings[2]


def test_int8_puts_wrap_around() -> None:
    stats, check = checker(2, "int8")
    for k in (126, 127, -128, -127):
        check(np.full(2, k, dtype=np.int8))
    assert stats.put_bad == 0


def test_the_stats_line(capsys: pytest.CaptureFixture[str]) -> None:
    stats, check = checker()
    check(np.full(4, 1.0))
    stats.answer()
    line = capsys.readouterr().out
    assert line.startswith("stats {") and '"puts":1' in line
