"""caproto's threading client: one Context, get_pvs() for every name, then reads or
subscriptions.

Snapshot: get_pvs() searches every name at once; each PV's connection is awaited
against the shared deadline (the timeout from the start), and its read is started
at once with wait=False and a callback, so missing PVs together cost one timeout.
Monitor: pv.subscribe(data_type='time') with a callback (run by caproto's callback thread).
Array: the same subscription (caproto asks for count 0, the server's current length); the
response's data is a big-endian numpy view of the received bytes, of which the runner reads
three elements.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, Callable, cast

from . import base

if TYPE_CHECKING:
    import numpy.typing as npt

    from ..driver import ArrayStore, Store
    from ..put_tasks import OnUpdate

LIBRARY = "caproto"
caproto: Any = None
Context: Any = None


def load() -> str:
    global caproto, Context
    import caproto as lib
    from caproto.threading.client import Context as ctx
    caproto = lib
    Context = ctx
    version: str = lib.__version__
    return version


def decode(response: Any) -> tuple[Any, int, int, float]:
    """(value, severity, status, timestamp) of a time-typed read or event response."""
    data = response.data
    meta = response.metadata
    value: Any
    if response.data_type in (caproto.ChannelType.TIME_STRING, caproto.ChannelType.STRING):
        value = [v.decode("latin-1") if isinstance(v, bytes) else v for v in data]
    else:
        value = data
    if len(value) == 1:
        value = value[0]
    return value, meta.severity, meta.status, meta.timestamp


class Client(base.Client):
    def __init__(self, names: list[str]) -> None:
        super().__init__(names)
        self.ctx = Context()
        self.pvs: list[Any] = []
        self.keep: list[tuple[Any, Callable[[Any, Any], None]]] = []  # caproto holds callbacks weakly

    def snapshot(self, timeout: float, t0: float) -> list[base.Entry]:
        deadline = t0 + timeout
        self.pvs = self.ctx.get_pvs(*self.names, timeout=timeout)
        out: list[base.Entry | None] = [None] * len(self.names)
        left = [1]  # one for the issuing loop, so early answers cannot finish the wait
        all_read = threading.Event()
        lock = threading.Lock()

        def reader(i: int) -> Callable[[Any], None]:
            def on_read(response: Any) -> None:
                try:
                    value, sev, stat, stamp = decode(response)
                    entry = base.ok(value, sev, stat, stamp, base.elapsed_ms(t0))
                except Exception as err:  # noqa: BLE001 - a bad response fails one entry
                    entry = base.failed(err, base.elapsed_ms(t0))
                with lock:
                    if out[i] is None:
                        out[i] = entry
                    left[0] -= 1
                    if left[0] == 0:
                        all_read.set()
            return on_read

        started: list[int] = []
        for i, pv in enumerate(self.pvs):
            try:
                pv.wait_for_connection(timeout=max(0.0, deadline - time.time()))
            except caproto.CaprotoTimeoutError:
                out[i] = base.failed("not found", base.elapsed_ms(t0))
                continue
            with lock:
                left[0] += 1
            try:
                pv.read(wait=False, callback=reader(i), data_type="time", timeout=timeout)
                started.append(i)
            except Exception as err:  # noqa: BLE001 - e.g. disconnected in between
                out[i] = base.failed(err, base.elapsed_ms(t0))
                with lock:
                    left[0] -= 1
        with lock:
            left[0] -= 1
            if left[0] == 0:
                all_read.set()
        all_read.wait(timeout)
        with lock:
            for i in started:
                if out[i] is None:
                    out[i] = base.failed("timeout", base.elapsed_ms(t0))
        return cast("list[base.Entry]", out)  # every entry is set by now

    def monitor(self, store: Store) -> None:
        self.pvs = self.ctx.get_pvs(*self.names, timeout=60.0)
        add = store.add
        now = time.time

        def callback_for(index: int) -> Callable[[Any, Any], None]:
            def on_update(_sub: Any, response: Any) -> None:
                value, sev, stat, stamp = decode(response)
                add(index, sev, stat, base.as_float(value), stamp, now())
            return on_update

        mask = caproto.SubscriptionType.DBE_VALUE | caproto.SubscriptionType.DBE_ALARM
        for i, pv in enumerate(self.pvs):
            sub = pv.subscribe(data_type="time", mask=mask)
            cb = callback_for(i)
            self.keep.append((sub, cb))
            sub.add_callback(cb)

    def array(self, store: ArrayStore) -> None:
        self.pvs = self.ctx.get_pvs(self.names[0], timeout=60.0)
        add = store.add_array
        now = time.time

        def on_update(_sub: Any, response: Any) -> None:
            received = now()
            meta = response.metadata
            add(meta.severity, response.data, meta.timestamp, received)

        mask = caproto.SubscriptionType.DBE_VALUE | caproto.SubscriptionType.DBE_ALARM
        sub = self.pvs[0].subscribe(data_type="time", mask=mask)
        self.keep.append((sub, on_update))
        sub.add_callback(on_update)

    # array-put and latency (put_tasks.py): pv.write of a numpy array (wait=True for the
    # completion); a subscription with a callback for the client's own updates.
    def put_connect(self, name: str) -> None:
        self.put_pv, = self.ctx.get_pvs(name, timeout=60.0)
        self.put_pv.wait_for_connection(timeout=10)

    def put_array(self, values: npt.NDArray[Any], callback: bool) -> None:
        self.put_pv.write(values, wait=callback, timeout=60)

    def latency_monitor(self, name: str, on_update: OnUpdate) -> None:
        self.put_connect(name)
        now = time.time

        def on_event(_sub: Any, response: Any) -> None:
            received = now()
            meta = response.metadata
            on_update(response.data, meta.severity, meta.timestamp, received)

        mask = caproto.SubscriptionType.DBE_VALUE | caproto.SubscriptionType.DBE_ALARM
        sub = self.put_pv.subscribe(data_type="time", mask=mask)
        self.keep.append((sub, on_event))
        sub.add_callback(on_event)

    def close(self) -> None:
        self.ctx.disconnect(wait=False)
