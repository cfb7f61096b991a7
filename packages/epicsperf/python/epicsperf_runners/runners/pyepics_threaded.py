"""pyepics with a thread pool of PV gets.

Snapshot: every epics.PV is created first (so all searches start together, as pyepics
advises for many PVs), then a ThreadPoolExecutor of WORKERS threads reads them; each
waits for its connection until the shared deadline (the timeout from the start), so
missing PVs together cost one timeout, and its get has its own timeout. Monitor: PV
objects with callbacks, created from the pool; the main thread polls libca while it waits
(pyepics.wait_polling says why).
"""

import time
from concurrent.futures import ThreadPoolExecutor

from . import base, pyepics
from .pyepics import read_pv, subscribe, wait_polling

LIBRARY = "pyepics"
WORKERS = 20
epics = None


def load():
    global epics
    import epics as lib
    epics = lib
    pyepics.load_from(lib)
    return lib.__version__


class Client(base.Client):
    def __init__(self, names):
        super().__init__(names)
        epics.ca.initialize_libca()
        self.pool = ThreadPoolExecutor(max_workers=max(1, min(WORKERS, len(names))),
                                       initializer=epics.ca.use_initial_context)
        self.pvs = []

    def wait_command(self, commands):
        return wait_polling(commands)

    def snapshot(self, timeout, t0):
        # All PV objects first (their searches go out together), then the pool reads them.
        self.pvs = [epics.PV(name, form="time", connection_timeout=timeout) for name in self.names]
        deadline = t0 + timeout

        def task(pv):
            return read_pv(pv, timeout, t0, connect_timeout=max(0.0, deadline - time.time()))

        return list(self.pool.map(task, self.pvs))

    def monitor(self, store):
        self.pvs = list(self.pool.map(lambda item: subscribe(item[1], item[0], store),
                                      enumerate(self.names)))

    def close(self):
        self.pool.shutdown(wait=False)
        epics.ca.finalize_libca()
