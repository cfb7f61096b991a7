"""pvapy (pvaccess, with its own bundled EPICS libraries) on the IOC's QSRV.

Snapshot: one pvaccess.Channel per name with its timeout set, and asyncGet() on each
with a result and an error callback, so the gets run concurrently and missing PVs
together cost one timeout. Monitor: channel.monitor(callback, request) per name.
The alarm status is mapped from alarm.message to the CA status when it names one.
Array: channel.monitor(callback, request) on the waveform. With pvapy's defaults (monitor
queue length 0, useNumPyArrays) the callback runs on pvapy's monitor thread with the received
structure itself, and pv['value'] is a read-only numpy view of its array: no copy; the runner
reads three elements.
pvapy must never share a process with the epicscorelibs-based clients.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, Callable

from .. import put_tasks
from . import base

if TYPE_CHECKING:
    import numpy.typing as npt

    from ..driver import ArrayStore, Store
    from ..put_tasks import OnUpdate

PROTOCOL = "PVA"

LIBRARY = "pvapy"
pva: Any = None
REQUEST = "field(value,alarm,timeStamp)"


def load() -> str:
    global pva
    import pvaccess as lib
    pva = lib
    version: str = getattr(lib, "__version__", "?")
    return version


def decode(pv: Any) -> tuple[Any, int, int, float]:
    """(value, severity, CA status, timestamp) of a PvObject."""
    value = pv["value"]
    if isinstance(value, dict):  # NTEnum
        value = value.get("index", 0)
    alarm = pv["alarm"]
    stamp = pv["timeStamp"]
    return (value, alarm["severity"], base.ca_status(alarm["message"], alarm["status"]),
            stamp["secondsPastEpoch"] + stamp["nanoseconds"] * 1e-9)


def error_text(err: object) -> str:
    text = str(err)
    if "timed out" in text:
        return "not found"
    return text


class Client(base.Client):
    def __init__(self, names: list[str]) -> None:
        super().__init__(names)
        self.channels: list[Any] = []

    def snapshot(self, timeout: float, t0: float) -> list[base.Entry]:
        n = len(self.names)
        out: list[base.Entry | None] = [None] * n
        left = [n]
        lock = threading.Lock()
        finished = threading.Event()
        if n == 0:
            finished.set()

        def settle(i: int, entry: base.Entry) -> None:
            with lock:
                if out[i] is not None:
                    return
                out[i] = entry
                left[0] -= 1
                if left[0] == 0:
                    finished.set()

        def callbacks(i: int) -> tuple[Callable[[Any], None], Callable[[Any], None]]:
            def on_value(pv: Any) -> None:
                try:
                    value, sev, stat, stamp = decode(pv)
                    settle(i, base.ok(value, sev, stat, stamp, base.elapsed_ms(t0)))
                except Exception as err:  # noqa: BLE001 - a bad value fails one entry
                    settle(i, base.failed(err, base.elapsed_ms(t0)))

            def on_error(err: Any) -> None:
                settle(i, base.failed(error_text(err), base.elapsed_ms(t0)))
            return on_value, on_error

        for i, name in enumerate(self.names):
            channel = pva.Channel(name, pva.PVA)
            channel.setTimeout(timeout)
            self.channels.append(channel)
            on_value, on_error = callbacks(i)
            try:
                channel.asyncGet(on_value, on_error, REQUEST)
            except Exception as err:  # noqa: BLE001
                settle(i, base.failed(error_text(err), base.elapsed_ms(t0)))
        finished.wait(timeout + max(1.0, timeout))
        with lock:
            return [e if e is not None else base.failed("timeout", base.elapsed_ms(t0))
                    for e in out]

    def monitor(self, store: Store) -> None:
        add = store.add
        now = time.time

        def callback_for(index: int) -> Callable[[Any], None]:
            def on_update(pv: Any) -> None:
                received = now()
                value, sev, stat, stamp = decode(pv)
                add(index, sev, stat, base.as_float(value), stamp, received)
            return on_update

        for i, name in enumerate(self.names):
            channel = pva.Channel(name, pva.PVA)
            self.channels.append(channel)
            channel.monitor(callback_for(i), REQUEST)

    def array(self, store: ArrayStore) -> None:
        add = store.add_array
        now = time.time

        def on_update(pv: Any) -> None:
            received = now()
            alarm = pv["alarm"]
            stamp = pv["timeStamp"]
            add(alarm["severity"], pv["value"],
                stamp["secondsPastEpoch"] + stamp["nanoseconds"] * 1e-9, received)

        channel = pva.Channel(self.names[0], pva.PVA)
        self.channels.append(channel)
        channel.monitor(on_update, REQUEST)

    # array-put and latency (put_tasks.py): the value field of a PvObject set from the numpy
    # array and Channel.put (a PVA put always has a reply); channel.monitor for the client's own
    # updates.
    def put_connect(self, name: str) -> None:
        self.put_channel = pva.Channel(name, pva.PVA)
        self.put_channel.setTimeout(60)
        self.put_object = self.put_channel.get("field(value)")

    def put_array(self, values: npt.NDArray[Any], callback: bool) -> None:
        if not callback and not self.latency_mode:
            raise put_tasks.NoPutWithoutCallback("PV Access has no put without a reply (pvapy)")
        self.put_object["value"] = values
        self.put_channel.put(self.put_object, "field(value)")

    def latency_monitor(self, name: str, on_update: OnUpdate) -> None:
        now = time.time
        self.latency_mode = True
        self.put_connect(name)

        def on_value(pv: Any) -> None:
            received = now()
            alarm = pv["alarm"]
            stamp = pv["timeStamp"]
            on_update(pv["value"], alarm["severity"],
                      stamp["secondsPastEpoch"] + stamp["nanoseconds"] * 1e-9, received)

        channel = pva.Channel(name, pva.PVA)
        self.channels.append(channel)
        channel.monitor(on_value, REQUEST)

    latency_mode = False

    def close(self) -> None:
        for channel in self.channels:
            try:
                if channel.isMonitorActive():
                    channel.stopMonitor()
            except Exception:  # noqa: BLE001 - closing anyway
                pass
