"""pyepics with a thread pool of PV gets.

Snapshot: every epics.PV is created first (so all searches start together, as pyepics
advises for many PVs), then a ThreadPoolExecutor of WORKERS threads reads them; each
waits for its connection until the shared deadline (the timeout from the start), so
missing PVs together cost one timeout, and its get has its own timeout. Monitor: PV
objects with callbacks, created from the pool; the main thread polls libca while it waits
(pyepics.wait_polling says why).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from . import base, pyepics
from .pyepics import read_pv, subscribe, wait_polling

if TYPE_CHECKING:
    import queue

    from ..driver import Store

LIBRARY = "pyepics"
WORKERS = 20
epics: Any = None


def load() -> str:
    global epics
    import epics as lib
    epics = lib
    pyepics.load_from(lib)
    version: str = lib.__version__
    return version


class Client(base.Client):
    def __init__(self, names: list[str]) -> None:
        super().__init__(names)
        epics.ca.initialize_libca()
        self.pool = ThreadPoolExecutor(max_workers=max(1, min(WORKERS, len(names))),
                                       initializer=epics.ca.use_initial_context)
        self.pvs: list[Any] = []

    def wait_command(self, commands: queue.Queue[str]) -> str:
        return wait_polling(commands)

    def snapshot(self, timeout: float, t0: float) -> list[base.Entry]:
        # All PV objects first (their searches go out together), then the pool reads them.
        self.pvs = [epics.PV(name, form="time", connection_timeout=timeout) for name in self.names]
        deadline = t0 + timeout

        def task(pv: Any) -> base.Entry:
            return read_pv(pv, timeout, t0, connect_timeout=max(0.0, deadline - time.time()))

        return list(self.pool.map(task, self.pvs))

    def monitor(self, store: Store) -> None:
        self.pvs = list(self.pool.map(lambda item: subscribe(item[1], item[0], store),
                                      enumerate(self.names)))

    def close(self) -> None:
        self.pool.shutdown(wait=False)
        epics.ca.finalize_libca()
