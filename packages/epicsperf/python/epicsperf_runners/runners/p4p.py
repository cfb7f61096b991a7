"""p4p's threaded PVA client, p4p.client.thread.Context('pva'), on the IOC's QSRV.

Snapshot: the list form get(names, timeout=t, throw=False), concurrent inside p4p; it
returns all results together, so every entry's elapsedMs is the batch's. Monitor:
ctx.monitor(name, callback) per name (callbacks on p4p's worker threads). Values are
p4p's unwrapped NT types; the alarm status is mapped from alarm.message to the CA status
when it names one (QSRV sends the CA status there), else alarm.status.
Array: ctx.monitor(name, callback) on the waveform; p4p unwraps the NTScalarArray into an
ntnumericarray, a numpy view of the received array, of which the runner reads three elements.
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

LIBRARY = "p4p"
Context: Any = None
Disconnected: Any = None
RemoteError: Any = None


def load() -> str:
    global Context, Disconnected, RemoteError
    from p4p.client.thread import Context as ctx, Disconnected as disc, RemoteError as remote
    Context, Disconnected, RemoteError = ctx, disc, remote
    from importlib.metadata import version
    return version("p4p")


def alarm_of(value: Any) -> tuple[int, int, float]:
    """(severity, CA status, timestamp) of an unwrapped NT value."""
    raw = getattr(value, "raw", None)
    if raw is None:
        return 0, 0, 0.0
    try:
        severity = raw["alarm.severity"]
        status = base.ca_status(raw["alarm.message"], raw["alarm.status"])
    except KeyError:
        severity, status = 0, 0
    try:
        stamp = raw["timeStamp.secondsPastEpoch"] + raw["timeStamp.nanoseconds"] * 1e-9
    except KeyError:
        stamp = 0.0
    return severity, status, stamp


def plain(value: Any) -> Any:
    """The value itself: p4p's unwrapped NT types are values already (ntenum is its index);
    a structure p4p does not unwrap gives its value field."""
    if hasattr(value, "severity") or not hasattr(value, "get"):
        return value
    try:
        return value["value"]
    except (KeyError, TypeError):
        return str(value)


def error_text(err: BaseException) -> str:
    if isinstance(err, TimeoutError):
        return "not found"
    if Disconnected is not None and isinstance(err, Disconnected):
        return "disconnected"
    return str(err) or type(err).__name__


class Client(base.Client):
    def __init__(self, names: list[str]) -> None:
        super().__init__(names)
        self.ctx = Context("pva")
        self.subscriptions: list[Any] = []

    def snapshot(self, timeout: float, t0: float) -> list[base.Entry]:
        results = self.ctx.get(self.names, timeout=timeout, throw=False)
        elapsed = base.elapsed_ms(t0)
        out = []
        for r in results:
            if isinstance(r, Exception):
                out.append(base.failed(error_text(r), elapsed))
                continue
            severity, status, stamp = alarm_of(r)
            out.append(base.ok(plain(r), severity, status, stamp, elapsed))
        return out

    def monitor(self, store: Store) -> None:
        add = store.add
        now = time.time

        def callback_for(index: int) -> Callable[[Any], None]:
            def on_update(value: Any) -> None:
                if isinstance(value, Exception):
                    return
                received = now()
                severity, status, stamp = alarm_of(value)
                add(index, severity, status, base.as_float(value), stamp, received)
            return on_update

        self.subscriptions = [self.ctx.monitor(name, callback_for(i), notify_disconnect=False)
                              for i, name in enumerate(self.names)]

    def array(self, store: ArrayStore) -> None:
        add = store.add_array
        now = time.time

        def on_update(value: Any) -> None:
            if isinstance(value, Exception):
                return
            received = now()
            severity, _status, stamp = alarm_of(value)
            add(severity, value, stamp, received)

        self.subscriptions = [self.ctx.monitor(self.names[0], on_update, notify_disconnect=False)]

    # array-put and latency (put_tasks.py): ctx.put of a numpy array (a PVA put always has a
    # reply, so there is no put without completion); ctx.monitor for the client's own updates.
    def put_connect(self, name: str) -> None:
        self.put_name = name
        self.ctx.get(name, timeout=10)

    def put_array(self, values: npt.NDArray[Any], callback: bool) -> None:
        if not callback and self.put_name is not None and not self.latency_mode:
            raise put_tasks.NoPutWithoutCallback("PV Access has no put without a reply (p4p)")
        self.ctx.put(self.put_name, values, timeout=60, get=False)

    def latency_monitor(self, name: str, on_update: OnUpdate) -> None:
        now = time.time
        self.put_name = name
        self.latency_mode = True

        def on_value(value: Any) -> None:
            if isinstance(value, Exception):
                return
            received = now()
            severity, _status, stamp = alarm_of(value)
            on_update(value, severity, stamp, received)

        self.subscriptions.append(self.ctx.monitor(name, on_value, notify_disconnect=False))

    put_name: str | None = None
    latency_mode = False

    def close(self) -> None:
        for sub in self.subscriptions:
            sub.close()
        self.ctx.close()
