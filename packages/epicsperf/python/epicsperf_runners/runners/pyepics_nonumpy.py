"""pyepics without numpy: the PV objects of runners/pyepics.py, with every array unpacked the
`as_numpy=False` way. pyepics's monitor callbacks always ask for numpy arrays, so the runner
turns the ca module's HAS_NUMPY off (the path pyepics takes where numpy is not installed, and
the one as_numpy=False selects): each update's array reaches the callback as a copy of libca's
buffer in a ctypes array, of which the runner reads three elements.
"""

from . import pyepics
from .pyepics import LIBRARY  # noqa: F401 - the driver's interface

NUMPY = False


def load() -> str:
    version = pyepics.load()
    pyepics.epics.ca.HAS_NUMPY = False
    return version


class Client(pyepics.Client):
    pass
