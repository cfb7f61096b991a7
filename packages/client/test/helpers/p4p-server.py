"""A pvxs server started by p4p, for the PV Access client tests: the types QSRV does not serve
(every scalar type incl. 64-bit, NTTable, unions, variant unions, structure arrays, NTNDArray),
a counter and an RPC handler. Binds to 127.0.0.1 on the ports given; prints "ready" once serving; exits when
its stdin closes."""
import sys
import threading
import time

import numpy as np
from p4p import Type, Value
from p4p.nt import NTNDArray, NTScalar, NTTable
from p4p.server import Server
from p4p.server.thread import SharedPV

tcp_port, udp_port = int(sys.argv[1]), int(sys.argv[2])
P = "P4P:"


class Echo:
    """Puts are taken as they come (the new value is posted to every subscriber)."""

    def put(self, pv, op):
        pv.post(op.value())
        op.done()


class Adder:
    """RPC: the sum of the argument's a and b, or the error of a call without them."""

    def rpc(self, pv, op):
        try:
            v = op.value()
            total = float(v.a) + float(v.b)
        except Exception as e:  # noqa: BLE001 - any bad argument is the call's error
            op.done(error="a and b are needed: %s" % e)
            return
        op.done(Value(Type([("sum", "d")]), {"sum": total}))


def shared(**kw):
    return SharedPV(handler=Echo(), **kw)

pvs = {}
CODES = "?bBhHiIlLfds"
for c in CODES:
    scalar = {"?": True, "s": "text", "f": 1.5, "d": -2.25}.get(c, 100 if c in "BHIL" else -100)
    if c == "b":
        scalar = -100
    pvs[P + "S:" + c] = shared(nt=NTScalar(c), initial=scalar)
    if c == "s":
        arr = ["a", "bc", ""]
    elif c == "?":
        arr = [True, False, True]
    else:
        arr = np.arange(-2, 3).astype({"b": "i1", "B": "u1", "h": "i2", "H": "u2", "i": "i4", "I": "u4", "l": "i8", "L": "u8",
                                       "f": "f4", "d": "f8"}[c])
        if c in "BHIL":
            arr = np.arange(0, 5).astype(arr.dtype)
    pvs[P + "A:" + c] = shared(nt=NTScalar("a" + c), initial=arr)
pvs[P + "S:LMAX"] = shared(nt=NTScalar("l"), initial=2**63 - 1)
pvs[P + "S:ULMAX"] = shared(nt=NTScalar("L"), initial=2**64 - 1)
table = NTTable([("index", "i"), ("position", "d"), ("label", "s")])
pvs[P + "TABLE"] = shared(nt=table, initial=table.wrap([{"index": i, "position": i * 0.5, "label": "r%d" % i} for i in range(3)]))
U = Type([("value", ("U", None, [("a", "i"), ("b", "s")]))], id="union_holder")
pvs[P + "UNION"] = shared(initial=Value(U, {"value": ("b", "chosen")}))
V = Type([("value", "v")], id="any_holder")
pvs[P + "ANY"] = shared(initial=Value(V, {"value": np.array([1.0, 2.0])}))
S = Type([("points", ("aS", None, [("x", "i"), ("y", "d")]))], id="points_t")
pvs[P + "STRUCTARR"] = shared(initial=Value(S, {"points": [{"x": 1, "y": 0.5}, {"x": 2, "y": 1.5}]}))
image = np.arange(12, dtype=np.uint16).reshape(3, 4)
pvs[P + "IMAGE"] = shared(nt=NTNDArray(), initial=image)
counter = shared(nt=NTScalar("l"), initial=0)
pvs[P + "COUNT"] = counter
pvs[P + "ADD"] = SharedPV(handler=Adder(), nt=NTScalar("d"), initial=0)

server = Server(providers=[pvs], useenv=False, conf={
    "EPICS_PVAS_INTF_ADDR_LIST": "127.0.0.1",
    "EPICS_PVAS_SERVER_PORT": str(tcp_port),
    "EPICS_PVAS_BROADCAST_PORT": str(udp_port),
    "EPICS_PVAS_AUTO_BEACON_ADDR_LIST": "NO",
    "EPICS_PVAS_BEACON_ADDR_LIST": "127.0.0.1",
})

stop = threading.Event()


def count():
    n = 0
    while not stop.is_set():
        n += 1
        counter.post(n)
        time.sleep(0.02)


threading.Thread(target=count, daemon=True).start()
print("ready", flush=True)
sys.stdin.read()
stop.set()
server.stop()
