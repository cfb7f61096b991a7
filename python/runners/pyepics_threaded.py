"""pyepics with a thread pool: each task creates an epics.PV and reads it.

Snapshot: a ThreadPoolExecutor of WORKERS threads runs one PV get per name, so up to
WORKERS missing PVs wait out their timeouts side by side; each task's timeout counts
from when its PV is created. Monitor: PV objects with callbacks, created from the pool.
"""

import time
from concurrent.futures import ThreadPoolExecutor

from . import base
from . import pyepics
from .pyepics import read_pv, subscribe

LIBRARY = "pyepics"
WORKERS = 100
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

    def snapshot(self, timeout, t0):
        def task(name):
            pv = epics.PV(name, form="time", connection_timeout=timeout)
            return pv, read_pv(pv, timeout, t0)

        done = list(self.pool.map(task, self.names))
        self.pvs = [pv for pv, _ in done]
        return [entry for _, entry in done]

    def monitor(self, store):
        self.pvs = list(self.pool.map(lambda item: subscribe(item[1], item[0], store),
                                      enumerate(self.names)))

    def close(self):
        self.pool.shutdown(wait=False)
        epics.ca.finalize_libca()
