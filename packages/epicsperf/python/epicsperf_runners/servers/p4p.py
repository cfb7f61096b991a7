"""p4p's PV Access server (on pvxs): one SharedPV per PV (p4p.server.thread), NTScalar('d') for
the double and NTScalarArray of int32 ('ai') or int8 ('ab') for the arrays, served by one
p4p.server.Server from a providers dict, configured from the environment (useenv, its default:
EPICS_PVAS_* and, in their absence, EPICS_PVA_*). post() is pv.post(value, timestamp=t), which
pvxs sends to the subscribers from its own threads.

With --latency N, <P>LATENCY:DOUBLE (NTScalarArray 'ad') and <P>LATENCY:CHAR ('ab'), one element 0
at start, are SharedPVs with a put handler (run on p4p's work queue thread): it posts the value put
(op.value(), its elements as many as were put, stamped with the wall clock) and then completes the
put (op.done()); a put of more than N elements fails.

With --counters N, <P>CALC1..N are SharedPVs of NTScalar('d'), opened at 1 in MINOR alarm
(alarm.severity 1, alarm.status 1 (DEVICE), alarm.message "HIGH", as QSRV sends a HIGH alarm) at
the start time. A tick, post_counters(), wraps the value with that alarm and the tick's time once,
in one Value, and posts it to each counter in order (pv.post(value)). <P>RAMP is one more such
SharedPV; post_ramp() posts its value wrapped the same way (one Value a post).
"""

from __future__ import annotations

import time
from typing import Any

from . import counter_names, latency_names, names, ramp_names

LIBRARY = "p4p"
PROTOCOLS = ("PVA",)
# The counters' alarm: MINOR, status DEVICE, message HIGH.
MINOR_HIGH = {"severity": 1, "status": 1, "message": "HIGH"}
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
        self.counters: list[Any] = []
        self.counter_type: Any = None
        self.ramp: Any = None
        self.server: Any = None

    def start(self, prefix: str, int32_sizes: list[int], byte_sizes: list[int], latency: int,
              counters: int) -> None:
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
        for name, kind in latency_names(prefix, latency).items():
            code, dtype = ("ad", numpy.float64) if kind == "double" else ("ab", numpy.int8)
            self.pvs[name] = SharedPV(nt=NTScalar(code), initial=numpy.zeros(1, dtype=dtype), timestamp=now,
                                      handler=EchoPut(latency))
        self.counter_type = NTScalar("d")
        for name in counter_names(prefix, counters):
            self.pvs[name] = SharedPV(nt=self.counter_type, initial={"value": 1.0, "alarm": MINOR_HIGH}, timestamp=now)
            self.counters.append(self.pvs[name])
        for name in ramp_names(prefix, counters):
            self.pvs[name] = self.ramp = SharedPV(nt=self.counter_type, initial={"value": 1.0, "alarm": MINOR_HIGH},
                                                 timestamp=now)
        # Serving once constructed (its sockets bound), on the environment's ports and interfaces.
        self.server = PvaServer(providers=[self.pvs], useenv=True)

    def post(self, name: str, value: Any, t: float) -> None:
        self.pvs[name].post(value, timestamp=t)

    def post_counters(self, value: float, t: float) -> None:
        update = self.counter_type.wrap({"value": value, "alarm": MINOR_HIGH}, timestamp=t)
        for pv in self.counters:
            pv.post(update)

    def post_ramp(self, value: float, t: float) -> None:
        self.ramp.post(self.counter_type.wrap({"value": value, "alarm": MINOR_HIGH}, timestamp=t))

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()


class EchoPut:
    """The round-trip PVs' put handler: post the value put, then complete the put."""

    def __init__(self, most: int) -> None:
        self.most = most

    def put(self, pv: Any, op: Any) -> None:
        value = op.value()
        if len(value) > self.most:
            op.done(error=f"at most {self.most} elements")
            return
        pv.post(value, timestamp=time.time())
        op.done()
