"""One module per server library behind the server runner driver (server_driver.py).

Each module exposes LIBRARY (the package named when it is missing), PROTOCOLS (what it serves,
"CA" and/or "PVA"), load() -> version, which imports the library (importing the module imports
none), and Server, which serves the crossing PVs (names()) and posts to them:

    server = Server()
    server.start(prefix, int32_sizes, byte_sizes, latency, counters)  # returns once serving, on the environment's ports
    server.post(name, make_value(kind, n, k), t)   # update k, with t as its timestamp
    server.post_counters(value, t)                 # a tick: every counter, 1 to N, the value at time t
    server.post_ramp(value, t)                     # RAMP's next value, at time t
    server.stop()

The driver makes each value before it reads the clock: the crossing starts at the hand-over.

With latency N (from 1; 0 for none) it also serves the round-trip PVs (latency_names()), each an
array of up to N elements starting as one element 0, whose puts go through the library's own
put handler in app code, which posts the elements put (as many as were put) and completes the put.

With counters N (0 for none) it also serves the counters (counter_names()), doubles of value 1 in
MINOR alarm (CA status HIGH; PV Access status DEVICE, message "HIGH") stamped with the start time;
post_counters() gives them all, in order, a new value and timestamp through the same API as post(),
keeping the alarm, and returns once the last is handed over (the driver's ticker calls it).
With counters it also serves <P>RAMP (ramp_names()), a double like them (1, MINOR, the start time);
post_ramp() gives it a new value and timestamp, keeping the alarm, through the same API, and
returns once it is handed over (the driver's ramp thread calls it, up to 5000 times a second,
while the ticker and a post may run on other threads).
"""

from __future__ import annotations

from typing import Any, Protocol

# --server name -> its module here (the declarations of src/servers/registry.ts)
SERVERS = {"softioc": "softioc", "p4p": "p4p", "caproto": "caproto"}


def names(prefix: str, int32_sizes: list[int], byte_sizes: list[int]) -> dict[str, tuple[str, int]]:
    """The PVs a server runner serves: name -> (kind, elements), kind "double", "int32" or "int8"."""
    pvs = {f"{prefix}CROSS:DOUBLE": ("double", 1)}
    pvs.update({f"{prefix}CROSS:INT32:{n}": ("int32", n) for n in int32_sizes})
    pvs.update({f"{prefix}CROSS:BYTES:{n}": ("int8", n) for n in byte_sizes})
    return pvs


def latency_names(prefix: str, latency: int) -> dict[str, str]:
    """The round-trip PVs of --latency (none for 0): name -> kind, "double" or "int8"."""
    if latency < 1:
        return {}
    return {f"{prefix}LATENCY:DOUBLE": "double", f"{prefix}LATENCY:CHAR": "int8"}


def counter_names(prefix: str, counters: int) -> list[str]:
    """The counters of --counters, in order: <P>CALC1 to <P>CALC<N> (the built-in IOC's names)."""
    return [f"{prefix}CALC{i}" for i in range(1, counters + 1)]


def ramp_names(prefix: str, counters: int) -> list[str]:
    """The ramping PV that comes with the counters (none without): <P>RAMP."""
    return [f"{prefix}RAMP"] if counters > 0 else []


def make_value(kind: str, elements: int, k: int) -> Any:
    """Update k of a PV of that kind: the float k, or a numpy array of `elements` times k."""
    if kind == "double":
        return float(k)
    import numpy
    return numpy.full(elements, k, dtype=numpy.int32 if kind == "int32" else numpy.int8)


class Server(Protocol):
    def start(self, prefix: str, int32_sizes: list[int], byte_sizes: list[int], latency: int,
              counters: int) -> None: ...

    def post(self, name: str, value: Any, t: float) -> None: ...

    def post_counters(self, value: float, t: float) -> None: ...

    def post_ramp(self, value: float, t: float) -> None: ...

    def stop(self) -> None: ...
