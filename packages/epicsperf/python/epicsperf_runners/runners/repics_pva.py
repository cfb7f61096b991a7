"""repics.pva.Context, the blocking pvAccess client of repics (on the Rust epics-pva-rs crate: no
pvxs), on the IOC's QSRV. Its API follows p4p's thread Context.

Snapshot: the list form get(names, timeout=t, throw=False), one concurrent batch in Rust; it
returns all results together, so every entry's elapsedMs is the batch's. A failed entry is the
exception itself (PvaTimeout for a name that never resolved). Monitor: ctxt.monitor(name,
callback) per name; the callbacks of every monitor run on one dispatcher thread. Values are
repics' augmented values (.severity, .status, .timestamp, .raw the received Value); the alarm
status is mapped from alarm.message to the CA status when it names one (QSRV sends the CA status
there), else alarm.status.
Array: ctxt.monitor(name, callback) on the waveform; the NTScalarArray is unwrapped into an
AugmentedArray, a numpy view of the received buffer in the native type (every element type of
the IOC, int64 included), of which the runner reads three elements.
Array-put and latency: ctxt.put(name, array, get=False) (the value built from the type the put
operation reports, without reading the current one first); PV Access has no put without a
reply, so array-put --no-callback fails with that reason, as for p4p.
Capture: not served.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable

from .. import put_tasks
from . import base

if TYPE_CHECKING:
    import numpy.typing as npt

    from ..driver import ArrayStore, Store
    from ..put_tasks import OnUpdate

PROTOCOL = "PVA"

LIBRARY = "repics"
repics: Any = None
pva: Any = None


def load() -> str:
    global repics, pva
    import repics as lib
    from repics import pva as front
    repics, pva = lib, front
    version: str = getattr(lib, "__version__", "?")
    return version


def alarm_of(value: Any) -> tuple[int, int, float]:
    """(severity, CA status, timestamp) of an unwrapped value."""
    raw = getattr(value, "raw", None)
    try:
        message = raw["alarm.message"] if raw is not None else ""
    except (KeyError, TypeError):
        message = ""
    return int(value.severity), base.ca_status(message, int(value.status)), float(value.timestamp)


def error_text(err: BaseException) -> str:
    if isinstance(err, pva.TimeoutError):
        return "not found"
    if isinstance(err, pva.Disconnected):
        return "disconnected"
    return str(err) or type(err).__name__


class Client(base.Client):
    def __init__(self, names: list[str]) -> None:
        super().__init__(names)
        self.ctx = pva.Context("pva")
        self.subscriptions: list[Any] = []

    def snapshot(self, timeout: float, t0: float) -> list[base.Entry]:
        results = self.ctx.get(self.names, timeout=timeout, throw=False)
        elapsed = base.elapsed_ms(t0)
        out = []
        for r in results:
            if isinstance(r, BaseException):
                out.append(base.failed(error_text(r), elapsed))
            elif not hasattr(r, "severity"):  # a structure repics does not unwrap: its Value
                out.append(base.ok(r.get("value"), 0, 0, 0.0, elapsed))
            else:
                severity, status, stamp = alarm_of(r)
                out.append(base.ok(r, severity, status, stamp, elapsed))
        return out

    def monitor(self, store: Store) -> None:
        add = store.add
        now = time.time

        def callback_for(index: int) -> Callable[[Any], None]:
            def on_update(value: Any) -> None:
                received = now()
                severity, status, stamp = alarm_of(value)
                add(index, severity, status, base.as_float(value), stamp, received)
            return on_update

        self.subscriptions = [self.ctx.monitor(name, callback_for(i)) for i, name in enumerate(self.names)]

    def array(self, store: ArrayStore) -> None:
        add = store.add_array
        now = time.time

        def on_update(value: Any) -> None:
            add(value.severity, value, value.timestamp, now())

        self.subscriptions = [self.ctx.monitor(self.names[0], on_update)]

    # array-put and latency (put_tasks.py): callbacks run on repics' dispatcher thread.
    def put_connect(self, name: str) -> None:
        self.put_name = name
        self.ctx.connect(name, timeout=10)

    def put_array(self, values: npt.NDArray[Any], callback: bool) -> None:
        if not callback and not self.latency_mode:
            raise put_tasks.NoPutWithoutCallback("PV Access has no put without a reply (repics)")
        self.ctx.put(self.put_name, values, timeout=60, get=False)

    def latency_monitor(self, name: str, on_update: OnUpdate) -> None:
        self.latency_mode = True
        self.put_connect(name)
        now = time.time

        def on_value(value: Any) -> None:
            on_update(value, value.severity, value.timestamp, now())

        self.subscriptions.append(self.ctx.monitor(name, on_value))

    latency_mode = False

    def close(self) -> None:
        for sub in self.subscriptions:
            sub.close()
        self.ctx.close()
