"""pyepics through its epics.ca module, the way its docs advise for many PVs: create every
channel first, connect them all, then start every get (wait=False) and collect them.

Snapshot: the connect phase shares one deadline (the timeout from the start), so all
missing PVs together cost one timeout; the gets of the connected channels then have
their own timeout. Monitor: ca.create_subscription with DBR_TIME and DBE_VALUE|DBE_ALARM.
Array: the same subscription with count=0 (the server's current length); pyepics copies
each update into a new numpy array, the runner looks at three elements.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, cast

from . import base

if TYPE_CHECKING:
    from ..driver import ArrayStore, Store

LIBRARY = "pyepics"
epics: Any = None
ca: Any = None


def load() -> str:
    global epics, ca
    import epics as lib
    import epics.ca
    epics = lib
    ca = lib.ca
    version: str = lib.__version__
    return version


class Client(base.Client):
    def __init__(self, names: list[str]) -> None:
        super().__init__(names)
        ca.initialize_libca()
        self.chids: list[Any] = []
        self.subscriptions: list[Any] = []

    def create_all(self) -> None:
        self.chids = [ca.create_channel(name, connect=False, auto_cb=False) for name in self.names]

    def snapshot(self, timeout: float, t0: float) -> list[base.Entry]:
        self.create_all()
        deadline = t0 + timeout
        out: list[base.Entry | None] = [None] * len(self.names)
        pending: list[tuple[int, Any, Any]] = []
        for i, chid in enumerate(self.chids):
            if ca.connect_channel(chid, timeout=max(0.0, deadline - time.time())):
                ftype = ca.promote_type(chid, use_time=True)
                ca.get_with_metadata(chid, ftype=ftype, wait=False)
                pending.append((i, chid, ftype))
            else:
                out[i] = base.failed("not found", base.elapsed_ms(t0))
        for i, chid, ftype in pending:
            try:
                data = ca.get_complete_with_metadata(chid, ftype=ftype, timeout=timeout)
            except Exception as err:  # noqa: BLE001 - one failed get fails one entry
                out[i] = base.failed(err, base.elapsed_ms(t0))
                continue
            if data is None or data.get("value") is None:
                out[i] = base.failed("timeout", base.elapsed_ms(t0))
            else:
                out[i] = base.ok(data["value"], data.get("severity", 0), data.get("status", 0),
                                 data.get("timestamp", 0.0), base.elapsed_ms(t0))
        return cast("list[base.Entry]", out)  # every entry is set by now

    def monitor(self, store: Store) -> None:
        self.create_all()
        mask = ca.dbr.DBE_VALUE | ca.dbr.DBE_ALARM
        add = store.add
        now = time.time

        def callback_for(index: int) -> Callable[..., None]:
            def on_update(value: Any = None, severity: int = 0, status: int = 0, timestamp: float = 0.0,
                          **_: Any) -> None:
                add(index, severity, status, base.as_float(value), timestamp, now())
            return on_update

        for i, chid in enumerate(self.chids):
            # Waits for this channel's connection (all were searched at creation).
            self.subscriptions.append(ca.create_subscription(
                chid, use_time=True, mask=mask, callback=callback_for(i), timeout=60.0))

    def array(self, store: ArrayStore) -> None:
        self.create_all()
        add = store.add_array
        now = time.time

        def on_update(value: Any = None, severity: int = 0, timestamp: float = 0.0, **_: Any) -> None:
            add(severity, value, timestamp, now())

        self.subscriptions.append(ca.create_subscription(
            self.chids[0], use_time=True, mask=ca.dbr.DBE_VALUE | ca.dbr.DBE_ALARM,
            callback=on_update, count=0, timeout=60.0))

    def close(self) -> None:
        for _cb, _arg, evid in self.subscriptions:
            ca.clear_subscription(evid)
        for chid in self.chids:
            ca.clear_channel(chid)
        ca.finalize_libca()
