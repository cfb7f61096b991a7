"""pyepics through epics.PV objects, as a naive user writes it: one PV after another.

Snapshot is sequential by design: each PV is created and read with the full timeout
before the next, so every missing PV costs one whole timeout. Monitor: one PV object
per name with a callback (the library's preemptive CA callbacks).

The main thread polls libca while it waits for the harness's next command, as pyepics asks
of a program that uses callbacks. A PV counts as connected before its connection callback
(on libca's thread) has made its subscription, and libca sends a request made on that thread
only at the next flush from another thread: a runner that blocked without polling left the
last PVs to connect with no update at all in some runs.

Array: one PV object with auto_monitor=DBE_VALUE|DBE_ALARM (pyepics would not monitor an
array this large by default) and a callback. pyepics copies each update out of libca's
buffer into a new numpy array (as_numpy, its default); the runner looks at three elements.
libca takes its array size limit from EPICS_CA_MAX_ARRAY_BYTES in the environment (the
IOC's client environment sets it; pyepics only sets 16 MiB when it is missing).
"""

from __future__ import annotations

import os
import queue
import sys
import time
from typing import TYPE_CHECKING, Any

from . import base

if TYPE_CHECKING:
    import numpy.typing as npt

    from ..driver import ArrayStore, Store
    from ..put_tasks import OnUpdate

LIBRARY = "pyepics"
epics: Any = None


def load() -> str:
    global epics
    import epics as lib
    epics = lib
    version: str = lib.__version__
    return version


def load_from(lib: Any) -> None:
    global epics
    epics = lib


def read_pv(pv: Any, timeout: float, t0: float, connect_timeout: float | None = None) -> base.Entry:
    """One PV object's read: wait for the connection, then its time-stamped value."""
    if not pv.wait_for_connection(timeout=timeout if connect_timeout is None else connect_timeout):
        return base.failed("not found", base.elapsed_ms(t0))
    data = pv.get_with_metadata(timeout=timeout, form="time")
    if data is None or data.get("value") is None:
        return base.failed("timeout", base.elapsed_ms(t0))
    return base.ok(data["value"], data.get("severity", 0), data.get("status", 0),
                   data.get("timestamp", 0.0), base.elapsed_ms(t0))


def subscribe(name: str, index: int, store: Store) -> Any:
    """A PV object whose callback stores each update (the pyepics monitor idiom)."""
    add = store.add
    now = time.time

    def on_update(value: Any = None, severity: int = 0, status: int = 0, timestamp: float = 0.0, **_: Any) -> None:
        add(index, severity, status, base.as_float(value), timestamp, now())

    return epics.PV(name, form="time", auto_monitor=epics.dbr.DBE_VALUE | epics.dbr.DBE_ALARM,
                    callback=on_update)


def subscribe_array(name: str, store: ArrayStore) -> Any:
    """A PV object monitoring the whole array, its callback storing one sample per update."""
    add = store.add_array
    now = time.time

    def on_update(value: Any = None, severity: int = 0, timestamp: float = 0.0, **_: Any) -> None:
        add(severity, value, timestamp, now())

    return epics.PV(name, form="time", auto_monitor=epics.dbr.DBE_VALUE | epics.dbr.DBE_ALARM,
                    callback=on_update)


def watch_array_limit(name: str, store: Store) -> None:
    """libca drops an update larger than EPICS_CA_MAX_ARRAY_BYTES (when EPICS_CA_AUTO_ARRAY_BYTES
    is NO) with only a printed message: end the run with why instead of waiting for updates."""
    def writer(message: str, *_: Any) -> None:
        sys.stderr.write(message)
        if "EPICS_CA_MAX_ARRAY_BYTES" in message:
            store.fail(f"{name}: libca ignored an update larger than EPICS_CA_MAX_ARRAY_BYTES="
                       f"{os.environ.get('EPICS_CA_MAX_ARRAY_BYTES', 'unset')} (EPICS_CA_AUTO_ARRAY_BYTES="
                       f"{os.environ.get('EPICS_CA_AUTO_ARRAY_BYTES', 'unset')}): raise the limit")

    epics.ca.replace_printf_handler(writer)


def wait_polling(commands: queue.Queue[str]) -> str:
    """The next stdin command, polling libca until it comes (see the module's note)."""
    while True:
        try:
            return commands.get(timeout=0.1)
        except queue.Empty:
            epics.poll(evt=1.e-3, iot=0.1)


class Client(base.Client):
    def __init__(self, names: list[str]) -> None:
        super().__init__(names)
        epics.ca.initialize_libca()
        self.pvs: list[Any] = []

    def wait_command(self, commands: queue.Queue[str]) -> str:
        return wait_polling(commands)

    def snapshot(self, timeout: float, t0: float) -> list[base.Entry]:
        out = []
        for name in self.names:
            pv = epics.PV(name, form="time", connection_timeout=timeout)
            self.pvs.append(pv)
            out.append(read_pv(pv, timeout, t0))
        return out

    def monitor(self, store: Store) -> None:
        self.pvs = [subscribe(name, i, store) for i, name in enumerate(self.names)]

    def array(self, store: ArrayStore) -> None:
        watch_array_limit(self.names[0], store)
        self.pvs = [subscribe_array(self.names[0], store)]

    # array-put and latency (put_tasks.py): PV.put of a numpy array, with wait=True for the
    # put-callback; a PV object with a monitor callback for the client's own updates.
    def put_connect(self, name: str) -> None:
        self.put_pv = epics.PV(name)
        if not self.put_pv.wait_for_connection(timeout=10):
            raise RuntimeError(f"{name}: not found")

    def put_array(self, values: npt.NDArray[Any], callback: bool) -> None:
        if self.put_pv is None:
            self.put_connect(self.names[0])
        self.put_pv.put(values, wait=callback, timeout=60)

    def latency_monitor(self, name: str, on_update: OnUpdate) -> None:
        now = time.time

        def on_change(value: Any = None, severity: int = 0, timestamp: float = 0.0, **_: Any) -> None:
            on_update(value, severity, timestamp, now())

        self.put_connect(name)
        self.pvs.append(epics.PV(name, form="time", auto_monitor=epics.dbr.DBE_VALUE | epics.dbr.DBE_ALARM,
                                 callback=on_change))

    put_pv: Any = None

    def close(self) -> None:
        # Destroying the CA context clears every channel; per-PV disconnect() is slow.
        epics.ca.finalize_libca()
