"""pvapy without numpy, as the arrayPerformance study's slow column measured it: the same
Channel and monitor as runners/pvapy.py, but the array of each update is read with
PvObject.getScalarArray(), which builds a Python list of every element (pvapy's path when
numpy arrays are off); the runner then looks at three elements of that list.
Snapshot and monitor (scalars) are those of the numpy runner.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from . import pvapy
from .pvapy import LIBRARY, REQUEST, load  # noqa: F401 - the driver's interface

if TYPE_CHECKING:
    from ..driver import ArrayStore

NUMPY = False


class Client(pvapy.Client):
    def array(self, store: ArrayStore) -> None:
        add = store.add_array
        now = time.time

        def on_update(pv: Any) -> None:
            received = now()
            pv.useNumPyArrays = False
            values = pv.getScalarArray()
            alarm = pv["alarm"]
            stamp = pv["timeStamp"]
            add(alarm["severity"], values,
                stamp["secondsPastEpoch"] + stamp["nanoseconds"] * 1e-9, received)

        channel = pvapy.pva.Channel(self.names[0], pvapy.pva.PVA)
        self.channels.append(channel)
        channel.monitor(on_update, REQUEST)
