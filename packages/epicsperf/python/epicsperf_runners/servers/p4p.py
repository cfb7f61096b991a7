"""p4p's PV Access server (on pvxs): one SharedPV per PV (p4p.server.thread), NTScalar('d') for
the double and NTScalarArray of int32 ('ai') or int8 ('ab') for the arrays, served by one
p4p.server.Server from a providers dict, configured from the environment (useenv, its default:
EPICS_PVAS_* and, in their absence, EPICS_PVA_*). post() is pv.post(value, timestamp=t), which
pvxs sends to the subscribers from its own threads.
"""

from __future__ import annotations

from typing import Any

from . import names

LIBRARY = "p4p"
PROTOCOLS = ("PVA",)
PvaServer: Any = None
SharedPV: Any = None
NTScalar: Any = None


def load() -> str:
    global PvaServer, SharedPV, NTScalar
    from p4p.nt import NTScalar as nt
    from p4p.server import Server as server
    from p4p.server.thread import SharedPV as shared
    PvaServer, SharedPV, NTScalar = server, shared, nt
    from importlib.metadata import version
    return version("p4p")


class Server:
    def __init__(self) -> None:
        self.pvs: dict[str, Any] = {}
        self.server: Any = None

    def start(self, prefix: str, int32_sizes: list[int], byte_sizes: list[int]) -> None:
        import time

        import numpy
        now = time.time()  # the initial values' time (without one, 1970)
        for name, (kind, n) in names(prefix, int32_sizes, byte_sizes).items():
            if kind == "double":
                self.pvs[name] = SharedPV(nt=NTScalar("d"), initial=0.0, timestamp=now)
            elif kind == "int32":
                self.pvs[name] = SharedPV(nt=NTScalar("ai"), initial=numpy.zeros(n, dtype=numpy.int32),
                                          timestamp=now)
            else:
                self.pvs[name] = SharedPV(nt=NTScalar("ab"), initial=numpy.zeros(n, dtype=numpy.int8),
                                          timestamp=now)
        # Serving once constructed (its sockets bound), on the environment's ports and interfaces.
        self.server = PvaServer(providers=[self.pvs], useenv=True)

    def post(self, name: str, value: Any, t: float) -> None:
        self.pvs[name].post(value, timestamp=t)

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
