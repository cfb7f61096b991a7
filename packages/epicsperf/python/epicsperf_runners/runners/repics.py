"""repics.ca, the blocking Channel Access front end of repics (CA and PVA for Python on the Rust
epics-rs crates: no libca), on the IOC's RSRV.

repics owns one tokio runtime (one worker thread by default) that runs every channel; its
blocking calls release the GIL and wait for their future, and every monitor of the front end
feeds one queue that a single dispatcher thread drains, calling the callbacks there in arrival
order.

Snapshot: the list form caget(names, timeout=t, throw=False) (form "time", the default), which
connects and reads every name concurrently in Rust against the one timeout; the library returns
all results together, so every entry's elapsedMs is the batch's. A name that did not connect is
a CaNothing with ECA_TIMEOUT. Monitor: camonitor(names, callback, all_updates=True): the
callback gets (value, index) on the dispatcher thread; all_updates=True because with the
default (False) updates that queued behind a busy callback are collapsed into the newest one.
Array: camonitor(name, callback, count=0) with DBE_VALUE|DBE_ALARM; each update is an
AugmentedArray, a numpy view of the array the extension received, in the native type (double,
float, long, short, char; an int64 waveform arrives as double, CA having no int64), of which the
runner reads three elements.
Array-put and latency: caput(name, array, wait=callback) (wait=True is a CA WRITE_NOTIFY,
wait=False a plain WRITE) and a camonitor of the client's own updates.
Capture: not served (the capture runners are pyepics and p4p).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from . import base

if TYPE_CHECKING:
    import numpy.typing as npt

    from ..driver import ArrayStore, Store
    from ..put_tasks import OnUpdate

LIBRARY = "repics"
repics: Any = None
ca: Any = None


def load() -> str:
    global repics, ca
    import repics as lib
    from repics import ca as front
    repics, ca = lib, front
    version: str = getattr(lib, "__version__", "?")
    return version


class Client(base.Client):
    def __init__(self, names: list[str]) -> None:
        super().__init__(names)
        repics.context()  # the shared CaContext, from the EPICS_CA_* environment: no channel yet
        self.subscriptions: list[Any] = []

    def snapshot(self, timeout: float, t0: float) -> list[base.Entry]:
        results = ca.caget(self.names, timeout=timeout, throw=False)
        return base.catools_results(results, base.elapsed_ms(t0))

    def monitor(self, store: Store) -> None:
        self.subscriptions = ca.camonitor(self.names, base.catools_updates(store), all_updates=True)

    def array(self, store: ArrayStore) -> None:
        self.subscriptions = [ca.camonitor(self.names[0], base.catools_array_updates(store), count=0,
                                           mask=ca.DBE_VALUE | ca.DBE_ALARM)]

    # array-put and latency (put_tasks.py): callbacks run on repics' dispatcher thread, so the
    # driver's threading.Event waits need no loop of the runner's own.
    def put_connect(self, name: str) -> None:
        self.put_name = name
        ca.connect(name, timeout=10)

    def put_array(self, values: npt.NDArray[Any], callback: bool) -> None:
        ca.caput(self.put_name, values, wait=callback, timeout=60)

    def latency_monitor(self, name: str, on_update: OnUpdate) -> None:
        self.put_connect(name)
        now = time.time

        def on_value(value: Any) -> None:
            on_update(value, value.severity, value.timestamp, now())

        self.subscriptions.append(ca.camonitor(name, on_value, count=0, all_updates=True,
                                               mask=ca.DBE_VALUE | ca.DBE_ALARM))

    def close(self) -> None:
        for sub in self.subscriptions:
            sub.close()
